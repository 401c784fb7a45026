package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.node.RegisteredNode;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Hashtable;
import java.util.Map;
import java.util.Objects;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.forked.ForkedTestContainerFactory;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * Node mode in Felix, from the feature {@code nodelet}: inert until {@code dev.nodelet.node} says
 * {@code enabled=true}; then the Node the test JVM created is adopted and reported Ready with the framework as its
 * runtime, its Lease held, and {@link RegisteredNode} registered; {@code enabled=false} withdraws the service and
 * ends the node's threads.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixNodeIT extends NodeletTestSupport {

  private static final String NODE_PID = "dev.nodelet.node";

  @Configuration
  public Option[] configuration() {
    return felixOptions();
  }

  @Test
  public void nodeModeAdoptsTheNodeRenewsItsLeaseAndStopsWhenTurnedOff() throws Exception {
    String filter = "(" + NodeIdentity.NODE_NAME_PROPERTY + "=" + NODE_NAME + ")";
    try (Tracked<ConfigurationAdmin> admin = track(ConfigurationAdmin.class, null);
        Tracked<KubernetesClient> clients = track(KubernetesClient.class, filter)) {
      ConfigurationAdmin configurationAdmin = admin.await();
      configurationAdmin.getConfiguration(KUBE_PID, "?").update(new Hashtable<>(Map.of(
          "master.url", System.getProperty(API_SERVER_URL_PROPERTY), "node.name", NODE_NAME)));
      KubernetesClient client = clients.await();
      assertNull("off by default: no RegisteredNode", bundleContext.getServiceReference(RegisteredNode.class));
      assertNull("off by default: no Lease",
          client.leases().inNamespace("kube-node-lease").withName(NODE_NAME).get());

      configurationAdmin.getConfiguration(NODE_PID, "?").update(new Hashtable<>(Map.of("enabled", true,
          "max.pods", 30)));
      try (Tracked<RegisteredNode> registered = track(RegisteredNode.class, "(nodelet.node.name=" + NODE_NAME
          + ")")) {
        RegisteredNode node = registered.await();
        Node seen = await().atMost(WAIT).until(() -> node.node().orElse(null),
            n -> n != null && n.getStatus() != null && n.getStatus().getConditions() != null
                && n.getStatus().getConditions().stream().anyMatch(c -> c.getType().equals("Ready")
                    && c.getStatus().equals("True")));
        // the test JVM created the Node: adopted, its default labels set
        assertEquals(System.getProperty(NODE_UID_PROPERTY), seen.getMetadata().getUid());
        assertEquals(NODE_NAME, seen.getMetadata().getLabels().get("kubernetes.io/hostname"));
        assertEquals("30", seen.getStatus().getCapacity().get("pods").toString());
        String runtime = seen.getStatus().getNodeInfo().getContainerRuntimeVersion();
        assertTrue(runtime, runtime.startsWith("osgi://org.apache.felix.framework/7."));
        String kubelet = seen.getStatus().getNodeInfo().getKubeletVersion();
        assertTrue(kubelet, kubelet.endsWith("-nodelet." + System.getProperty(VERSION_PROPERTY)));
        Lease lease = await().atMost(WAIT).until(() -> client.leases().inNamespace("kube-node-lease")
            .withName(NODE_NAME).get(), Objects::nonNull);
        assertEquals(NODE_NAME, lease.getSpec().getHolderIdentity());
        assertEquals(Integer.valueOf(40), lease.getSpec().getLeaseDurationSeconds());
        assertEquals(2, nodeThreads());
      }

      configurationAdmin.getConfiguration(NODE_PID, "?").update(new Hashtable<>(Map.of("enabled", false)));
      await().atMost(WAIT).until(() -> bundleContext.getServiceReference(RegisteredNode.class) == null
          && nodeThreads() == 0);
    }
  }

  private static long nodeThreads() {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("nodelet-node-")
        && t.isAlive()).count();
  }
}
