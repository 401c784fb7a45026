package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.nodelet.kube.NodeIdentity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import javax.inject.Inject;
import org.apache.karaf.features.Feature;
import org.apache.karaf.features.FeaturesService;
import org.apache.karaf.shell.api.console.Command;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.api.console.SessionFactory;
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
import org.osgi.framework.ServiceReference;

/**
 * The features in a real Karaf, resolving offline: {@code feature:repo-add} and {@code feature:install nodelet}
 * through the FeaturesService, with {@code dev.nodelet.kube} configured by {@code etc/dev.nodelet.kube.cfg}.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(KarafTestContainerFactory.class)
public class KarafKubeIT extends NodeletTestSupport {


  @Inject
  private FeaturesService featuresService;

  @Inject
  private SessionFactory sessionFactory;

  @Configuration
  public Option[] configuration() {
    return karafOptions();
  }

  private void install(String feature) throws Exception {
    String version = System.getProperty(VERSION_PROPERTY);
    featuresService.addRepository(URI.create("mvn:dev.nodelet/nodelet-features/" + version + "/xml/features"));
    // like feature:install --no-auto-refresh: a refresh would also restart this test's probe bundle
    featuresService.installFeature(feature, EnumSet.of(FeaturesService.Option.NoAutoRefreshBundles));
  }

  @Test
  public void nodeletFeatureInstallsOfflineAndConnects() throws Exception {
    install("nodelet");

    for (String name : List.of("nodelet", "nodelet-kube", "nodelet-fabric8", "nodelet-runtime")) {
      Feature feature = featuresService.getFeature(name);
      assertTrue(name + " is installed", featuresService.isInstalled(feature));
    }
    List<String> notActive = new ArrayList<>();
    for (Bundle bundle : bundleContext.getBundles()) {
      if (bundle.getState() != Bundle.ACTIVE && bundle.getHeaders().get("Fragment-Host") == null) {
        notActive.add(bundle.getSymbolicName() + " state " + bundle.getState());
      }
    }
    assertEquals("bundles not active", List.of(), notActive);

    String nodeFilter = "(" + NodeIdentity.NODE_NAME_PROPERTY + "=" + NODE_NAME + ")";
    try (Tracked<KubernetesClient> client = track(KubernetesClient.class, nodeFilter);
        Tracked<NodeIdentity> identity = track(NodeIdentity.class, nodeFilter)) {
      assertEquals(SEEDED_VALUE, client.await().configMaps().inNamespace("default").withName(SEEDED_CONFIGMAP)
          .get().getData().get(SEEDED_KEY));
      // fabric8's own ManagedKubernetesClient stays unconfigured: the only client is Nodelet's
      ServiceReference<?>[] clients = bundleContext.getServiceReferences(KUBERNETES_CLIENT, null);
      assertEquals(1, clients.length);
      assertEquals(KUBE_BUNDLE, clients[0].getBundle().getSymbolicName());
      String expectedUid = System.getProperty(NODE_UID_PROPERTY);
      await().atMost(WAIT).until(() -> identity.await().nodeUid(), Optional.of(expectedUid)::equals);
    }
  }

  /**
   * The Karaf commands of {@code nodelet-karaf-shell}, which {@code nodelet} installs where Karaf's shell is:
   * registered once their services are there, and run through a headless session as {@code ssh} or the console
   * would.
   */
  @Test
  public void karafShellFeatureRegistersTheNodeletCommands() throws Exception {
    install("nodelet");
    assertTrue("nodelet installs the Karaf commands with the shell", Arrays.stream(
        bundleContext.getBundles()).anyMatch(b -> b.getSymbolicName().equals("nodelet-karaf-shell")));

    // the Karaf command, not the Gogo command of the same name (nodelet-gogo-shell)
    await().atMost(WAIT).until(() -> sessionFactory.getRegistry().getCommands().stream()
        .filter(c -> c.getScope().equals("nodelet") && c.getName().equals("objects"))
        .map(Command::getDescription).anyMatch(d -> d.startsWith("Lists the ConfigMaps and Secrets")));

    assertTrue(execute("nodelet:objects").startsWith("RESOURCE  NAMESPACE  NAME  STRATEGY  STATE  REFERENCES  "
        + "LAST-ACCESS"));
    await().atMost(WAIT).until(() -> execute("nodelet:drivers").startsWith("DRIVER"));
  }

  /** What a command printed, and what it returned (Gogo commands return their text). */
  private String execute(String command) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try (PrintStream outStream = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);
        Session session = sessionFactory.create(new ByteArrayInputStream(new byte[0]), outStream, errStream)) {
      Object result = session.execute(command);
      String printed = out.toString(StandardCharsets.UTF_8) + (result == null ? "" : result.toString());
      assertEquals(command + " wrote to stderr", "", err.toString(StandardCharsets.UTF_8));
      return printed;
    }
  }
}
