package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Hashtable;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.forked.ForkedTestContainerFactory;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * nodelet-pods in Felix with the rest of the feature {@code nodelet}: with its configuration a pod of this node
 * whose image is a bundle file runs as that bundle under the pod's location, gets its env as a configuration bound
 * to that bundle, is {@code Running} in the API server, and is removed with the pod.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixPodsIT extends NodeletTestSupport {

  private static final String PODS_PID = "dev.nodelet.pods";
  private static final String LOCATION = "nodelet-pod:default/itest-pod/app";

  @Configuration
  public Option[] configuration() {
    return felixOptions();
  }

  @Test
  public void aPodRunsAsABundleWithItsConfigurationAndGoesWithThePod() throws Exception {
    Path work = Files.createTempDirectory("nodelet-pods-");
    Path jar = work.resolve("itest-hello.jar");
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().putValue("Bundle-ManifestVersion", "2");
    manifest.getMainAttributes().putValue("Bundle-SymbolicName", "itest.hello");
    manifest.getMainAttributes().putValue("Bundle-Version", "1.0.0");
    try (OutputStream out = Files.newOutputStream(jar); JarOutputStream unused = new JarOutputStream(out, manifest)) {
      // a bundle with a manifest only
    }
    try (Tracked<ConfigurationAdmin> admin = track(ConfigurationAdmin.class, null);
        Tracked<KubernetesClient> client = track(KubernetesClient.class, null)) {
      admin.await().getConfiguration(KUBE_PID, "?").update(new Hashtable<>(Map.of(
          "master.url", System.getProperty(API_SERVER_URL_PROPERTY), "node.name", NODE_NAME)));
      admin.await().getConfiguration(PODS_PID, "?").update(new Hashtable<>(Map.of(
          "work.dir", work.toString())));
      Pod pod = new PodBuilder().withNewMetadata().withName("itest-pod").withNamespace("default").endMetadata()
          .withNewSpec().withNodeName(NODE_NAME).addNewContainer().withName("app").withImage(jar.toUri().toString())
          .addNewEnv().withName("GREETING").withValue("hello").endEnv().endContainer().endSpec().build();
      // a new kube configuration replaces the client: retry until the one that stays answers
      await().atMost(WAIT).ignoreExceptions().until(() -> {
        client.await().pods().inNamespace("default").resource(pod).createOr(existing -> existing.update());
        return true;
      });
      KubernetesClient kube = client.await();
      await().atMost(WAIT).ignoreExceptions().until(() -> "Running".equals(kube.pods().inNamespace("default")
          .withName("itest-pod").get().getStatus().getPhase()));
      Bundle bundle = bundleContext.getBundle(LOCATION);
      assertNotNull(bundle);
      assertEquals(Bundle.ACTIVE, bundle.getState());
      assertEquals("osgi://" + bundle.getBundleId(), kube.pods().inNamespace("default").withName("itest-pod").get()
          .getStatus().getContainerStatuses().get(0).getContainerID());
      org.osgi.service.cm.Configuration[] bound = admin.await().listConfigurations(
          "(" + ConfigurationAdmin.SERVICE_BUNDLELOCATION + "=" + LOCATION + ")");
      assertEquals(1, bound.length);
      assertEquals("hello", bound[0].getProperties().get("GREETING"));

      kube.pods().inNamespace("default").withName("itest-pod").delete();
      await().atMost(WAIT).until(() -> bundleContext.getBundle(LOCATION) == null);
      await().atMost(WAIT).until(() -> admin.await().listConfigurations(
          "(" + ConfigurationAdmin.SERVICE_BUNDLELOCATION + "=" + LOCATION + ")") == null);
    }
  }
}
