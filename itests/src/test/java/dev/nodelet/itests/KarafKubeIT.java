package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.nodelet.kube.NodeIdentity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import javax.inject.Inject;
import org.apache.karaf.features.Feature;
import org.apache.karaf.features.FeaturesService;
import org.junit.AfterClass;
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

  /** Only set in the test JVM, where the configuration method runs. */
  private static ApiServerFixture apiServer;

  @Inject
  private FeaturesService featuresService;

  @Configuration
  public Option[] configuration() {
    apiServer = ApiServerFixture.start();
    return karafOptions(apiServer);
  }

  @AfterClass
  public static void stopApiServer() {
    if (apiServer != null) {
      apiServer.close();
    }
  }

  @Test
  public void nodeletFeatureInstallsOfflineAndConnects() throws Exception {
    String version = System.getProperty(VERSION_PROPERTY);
    featuresService.addRepository(URI.create("mvn:dev.nodelet/nodelet-features/" + version + "/xml/features"));
    // like feature:install --no-auto-refresh: a refresh would also restart this test's probe bundle
    featuresService.installFeature("nodelet", EnumSet.of(FeaturesService.Option.NoAutoRefreshBundles));

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
}
