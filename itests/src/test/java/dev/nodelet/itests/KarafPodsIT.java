package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import javax.inject.Inject;
import org.apache.karaf.features.FeaturesService;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.karaf.container.internal.KarafTestContainerFactory;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;

/**
 * The example pod ({@code examples/pod-hello/pod.yaml}: its ConfigMap, its Secret and its pod) end to end in a real
 * Karaf: {@code feature:install nodelet} as docs/karaf.md says, node mode and {@code dev.nodelet.pods} configured
 * in {@code etc/}, the pod's image {@code mvn:dev.nodelet/nodelet-example-pod-hello/...} taken from the build's
 * reactor repository as the pods' {@code maven.local.repository} (as the launcher's demo repository). The pod is
 * {@code Running} in the API server, the example's bundle ACTIVE under the pod's location, its component has the
 * ConfigMap's greeting and logs it, follows an edit of the ConfigMap, and everything goes with the pod. A second
 * pod's image names a tiny Karaf feature ({@code feature:itest-tiny/1.0.0}), installed with the pod and uninstalled
 * with it.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(KarafTestContainerFactory.class)
public class KarafPodsIT extends NodeletTestSupport {

  private static final String POD = "hello";
  private static final String CONFIGMAP = "hello-settings";
  private static final String LOCATION = "nodelet-pod:default/" + POD + "/hello";
  private static final String COMPONENT = "dev.nodelet.examples.podhello.Greeter";

  /** A tiny feature for a pod whose image names it: one bundle that nothing else installs. */
  private static final String TINY_FEATURE = "itest-tiny";
  private static final String TINY_BUNDLE = "org.apache.commons.commons-io";
  private static final String TINY_FEATURES_PROPERTY = "nodelet.itest.tiny.features";

  @Inject
  private FeaturesService featuresService;

  @Configuration
  public Option[] configuration() throws IOException {
    List<Option> options = new ArrayList<>(List.of(karafOptions()));
    Properties build = build();
    // the example's log lines in data/log/karaf.log: Pax Exam's Karaf logs WARN and above only
    String logCfg = "etc/org.ops4j.pax.logging.cfg";
    options.add(editConfigurationFilePut(logCfg, "log4j2.logger.podhello.name", "dev.nodelet.examples.podhello"));
    options.add(editConfigurationFilePut(logCfg, "log4j2.logger.podhello.level", "INFO"));
    options.add(editConfigurationFilePut("etc/dev.nodelet.node.cfg", "enabled", "true"));
    // the example's bundle is in the reactor repository, as it is in the launcher's demo repository
    options.add(editConfigurationFilePut("etc/dev.nodelet.pods.cfg", "maven.local.repository",
        build.getProperty("reactor.repository")));
    Path tiny = Path.of(build.getProperty("build.directory"), "karaf-pods-features.xml");
    Files.writeString(tiny, "<features xmlns=\"http://karaf.apache.org/xmlns/features/v1.6.0\" name=\"itest\">\n"
        + "  <feature name=\"" + TINY_FEATURE + "\" version=\"1.0.0\">\n"
        + "    <bundle>mvn:commons-io/commons-io/" + build.getProperty("commons-io.version") + "</bundle>\n"
        + "  </feature>\n</features>\n", StandardCharsets.UTF_8);
    options.add(org.ops4j.pax.exam.CoreOptions.systemProperty(TINY_FEATURES_PROPERTY).value(tiny.toUri()
        .toString()));
    // the example's manifest as it is, but bound to this test's node
    try (KubernetesClient admin = apiServer().newClient();
        InputStream manifest = Files.newInputStream(Path.of(build.getProperty("pod.hello.manifest")))) {
      List<HasMetadata> objects = admin.load(manifest).items();
      for (HasMetadata object : objects) {
        if (object instanceof Pod) {
          ((Pod) object).getSpec().setNodeName(NODE_NAME);
        }
        admin.resource(object).inNamespace("default").create();
      }
    }
    return options.toArray(Option[]::new);
  }

  /** feature:install nodelet, once: the second call finds it installed. */
  private void installNodelet() throws Exception {
    featuresService.addRepository(URI.create("mvn:dev.nodelet/nodelet-features/" + System.getProperty(
        VERSION_PROPERTY) + "/xml/features"));
    // like feature:install -r nodelet: a refresh would also restart this test's probe bundle
    featuresService.installFeature("nodelet", EnumSet.of(FeaturesService.Option.NoAutoRefreshBundles));
    // the probe reaches fabric8's model through a dynamic import: wait until the installed bundles offer it (one
    // clean run failed to load Pod right after the install)
    await().atMost(WAIT).ignoreExceptions().until(() -> bundleContext.getBundle()
        .loadClass("io.fabric8.kubernetes.api.model.Pod") != null);
  }

  @Test
  public void theExamplePodRunsFollowsItsConfigMapAndGoesWithThePod() throws Exception {
    installNodelet();
    // a class of its own: JUnit reflects on this class's methods (lambdas included) before the features are there
    new ExamplePodSteps(this, System.getProperty(VERSION_PROPERTY)).run();
  }

  @Test
  public void aPodWhoseImageNamesAFeatureInstallsItAndUninstallsItWithThePod() throws Exception {
    installNodelet();
    featuresService.addRepository(URI.create(System.getProperty(TINY_FEATURES_PROPERTY)));
    new FeaturePodSteps(this).run();
  }

  /** A pod whose image is {@code feature:itest-tiny/1.0.0}: the feature comes and goes with the pod. */
  private static final class FeaturePodSteps {
    private static final String LOCATION = "nodelet-pod:default/tiny/c";
    private final KarafPodsIT test;

    FeaturePodSteps(KarafPodsIT test) {
      this.test = test;
    }

    void run() throws Exception {
      FeaturesService features = test.featuresService;
      assertTrue(bundles(TINY_BUNDLE).isEmpty());
      try (Tracked<KubernetesClient> clients = test.track(KubernetesClient.class, null)) {
        KubernetesClient kube = clients.await();
        kube.pods().inNamespace("default").resource(new io.fabric8.kubernetes.api.model.PodBuilder()
            .withNewMetadata().withName("tiny").endMetadata().withNewSpec().withNodeName(NODE_NAME)
            .addNewContainer().withName("c").withImage("feature:" + TINY_FEATURE + "/1.0.0").endContainer()
            .endSpec().build()).create();
        Pod running = await().atMost(WAIT).ignoreExceptions().until(() -> kube.pods().inNamespace("default")
            .withName("tiny").get(), p -> "Running".equals(p.getStatus().getPhase()));
        Bundle marker = test.bundleContext.getBundle(LOCATION);
        assertNotNull("no bundle at " + LOCATION, marker);
        assertEquals("nodelet-feature." + TINY_FEATURE, marker.getSymbolicName());
        assertEquals("osgi://" + marker.getBundleId(),
            running.getStatus().getContainerStatuses().get(0).getContainerID());
        assertTrue(features.isInstalled(features.getFeature(TINY_FEATURE, "1.0.0")));
        List<Bundle> installed = bundles(TINY_BUNDLE);
        assertEquals(1, installed.size());
        assertEquals(Bundle.ACTIVE, installed.get(0).getState());

        kube.pods().inNamespace("default").withName("tiny").delete();
        await().atMost(WAIT).until(() -> test.bundleContext.getBundle(LOCATION) == null
            && !features.isInstalled(features.getFeature(TINY_FEATURE, "1.0.0")) && bundles(TINY_BUNDLE).isEmpty());
        await().atMost(WAIT).until(() -> kube.pods().inNamespace("default").withName("tiny").get() == null);
      }
    }

    private List<Bundle> bundles(String symbolicName) {
      List<Bundle> found = new ArrayList<>();
      for (Bundle bundle : test.bundleContext.getBundles()) {
        if (symbolicName.equals(bundle.getSymbolicName())) {
          found.add(bundle);
        }
      }
      return found;
    }
  }

  /** The steps that name types of the features (fabric8, Declarative Services), loaded once they are installed. */
  private static final class ExamplePodSteps {
    private final KarafPodsIT test;
    private final String version;

    ExamplePodSteps(KarafPodsIT test, String version) {
      this.test = test;
      this.version = version;
    }

    void run() throws Exception {
      try (Tracked<KubernetesClient> clients = test.track(KubernetesClient.class, null);
          Tracked<ConfigurationAdmin> admins = test.track(ConfigurationAdmin.class, null);
          Tracked<ServiceComponentRuntime> scrs = test.track(ServiceComponentRuntime.class, null)) {
        KubernetesClient kube = clients.await();
        Pod running = await().atMost(WAIT).ignoreExceptions().until(() -> kube.pods().inNamespace("default")
            .withName(POD).get(), p -> "Running".equals(p.getStatus().getPhase()));
        // node mode is on (etc/dev.nodelet.node.cfg): this Karaf holds the node's Lease
        await().atMost(WAIT).until(() -> kube.leases().inNamespace("kube-node-lease").withName(NODE_NAME).get(),
            lease -> lease != null && NODE_NAME.equals(lease.getSpec().getHolderIdentity()));
        ContainerStatus container = running.getStatus().getContainerStatuses().get(0);
        assertEquals("mvn:dev.nodelet/nodelet-example-pod-hello/" + version, container.getImage());
        assertTrue(container.getReady());

        Bundle bundle = test.bundleContext.getBundle(LOCATION);
        assertNotNull("no bundle at " + LOCATION, bundle);
        assertEquals("nodelet-example-pod-hello", bundle.getSymbolicName());
        assertEquals(Bundle.ACTIVE, bundle.getState());
        assertEquals("osgi://" + bundle.getBundleId(), container.getContainerID());

        // the component's configuration is the pod's env, with the ConfigMap's value; its volume has the Secret
        ServiceComponentRuntime scr = scrs.await();
        Map<String, Object> properties = await().atMost(WAIT).until(() -> activeConfiguration(scr, bundle),
            p -> p != null && "hello from a ConfigMap".equals(p.get("GREETING")));
        assertEquals(POD, properties.get("nodelet.pod.name"));
        Path token = Path.of((String) properties.get("nodelet.volume.token"), "token");
        assertEquals("not-a-real-token", Files.readString(token, StandardCharsets.UTF_8));
        awaitLogLine("Pod hello says: hello from a ConfigMap");
        awaitLogLine("Read the Secret file " + token + " (16 bytes)");

        // an edit of the ConfigMap reaches the running component (@Modified), not a new one
        Object componentId = properties.get("component.id");
        kube.configMaps().inNamespace("default").withName(CONFIGMAP).edit(c -> {
          c.getData().put("greeting", "bonjour");
          return c;
        });
        Map<String, Object> modified = await().atMost(WAIT).until(() -> activeConfiguration(scr, bundle),
            p -> p != null && "bonjour".equals(p.get("GREETING")));
        assertEquals(componentId, modified.get("component.id"));
        awaitLogLine("Pod hello now says: bonjour");

        kube.pods().inNamespace("default").withName(POD).delete();
        await().atMost(WAIT).until(() -> test.bundleContext.getBundle(LOCATION) == null);
        ConfigurationAdmin configurationAdmin = admins.await();
        await().atMost(WAIT).until(() -> configurationAdmin.listConfigurations(
            "(" + ConfigurationAdmin.SERVICE_BUNDLELOCATION + "=" + LOCATION + ")") == null);
        await().atMost(WAIT).until(() -> kube.pods().inNamespace("default").withName(POD).get() == null);
        awaitLogLine("Greeter stopped");
      }
    }

    /** The properties of the example component's active configuration, or null. */
    private static Map<String, Object> activeConfiguration(ServiceComponentRuntime scr, Bundle bundle) {
      if (bundle.getState() != Bundle.ACTIVE) {
        return null;
      }
      for (ComponentDescriptionDTO description : scr.getComponentDescriptionDTOs(bundle)) {
        if (description.name.equals(COMPONENT)) {
          for (ComponentConfigurationDTO configuration : scr.getComponentConfigurationDTOs(description)) {
            if (configuration.state == ComponentConfigurationDTO.ACTIVE) {
              return configuration.properties;
            }
          }
        }
      }
      return null;
    }

    /** Waits for a line of the example's log in Karaf's log file, {@code data/log/karaf.log}. */
    private static void awaitLogLine(String text) {
      Path log = Path.of(System.getProperty("karaf.data"), "log", "karaf.log");
      await().atMost(WAIT).until(() -> Files.readString(log, StandardCharsets.UTF_8), s -> s.contains(text));
    }
  }
}
