package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.nodelet.dra.DeviceSnapshots;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
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
import org.osgi.framework.ServiceReference;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * nodelet-dra-grpc in Felix with the example external driver as a real child process on real unix sockets: the
 * driver registers, its devices become this node's ResourceSlices, and stopping the bundle leaves no thread,
 * socket or DeviceSnapshots registration behind.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixDraGrpcIT extends NodeletTestSupport {

  private static final String GRPC_BUNDLE = "nodelet-dra-grpc";
  private static final String GRPC_PID = "dev.nodelet.dra.grpc";
  private static final String DRIVER = "gpu.itest.example.com";


  @Configuration
  public Option[] configuration() {
    return felixOptions();
  }

  @Test
  public void anExternalDriverIsPublishedAndStoppingTheBundleLeavesNothingBehind() throws Exception {
    Set<String> socketsBefore = unixSockets();
    Path registry = privateFolder("registry");
    Path plugins = privateFolder("plugins");
    try (Tracked<ConfigurationAdmin> admin = track(ConfigurationAdmin.class, null);
        Tracked<KubernetesClient> client = track(KubernetesClient.class, null)) {
      admin.await().getConfiguration(KUBE_PID, "?").update(new Hashtable<>(Map.of(
          "master.url", System.getProperty(API_SERVER_URL_PROPERTY), "node.name", NODE_NAME)));
      admin.await().getConfiguration(GRPC_PID, "?").update(new Hashtable<>(Map.of(
          "registration.folder", registry.toString(), "poll.interval.millis", 200L)));

      Process driver = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-jar", System.getProperty(EXTERNAL_DRIVER_JAR_PROPERTY), "--registry", registry.toString(),
          "--plugins", plugins.toString(), "--name", DRIVER, "--devices", "3")
          .redirectErrorStream(true).redirectOutput(Path.of(registry + ".log").toFile()).start();
      try {
        // registered: a DeviceSnapshots service of that name, and its devices published as this node's slices
        await().atMost(WAIT).until(() -> driverServices().contains(DRIVER));
        await().atMost(WAIT).until(() -> client.await().resources(ResourceSlice.class)
            .withField("spec.nodeName", NODE_NAME).withField("spec.driver", DRIVER).list().getItems().stream()
            .mapToInt(s -> s.getSpec().getDevices().size()).sum() == 3);
        assertTrue("gRPC threads run", !grpcThreads().isEmpty());
        assertTrue("Nodelet holds unix sockets to the driver", !unixSockets().equals(socketsBefore));

        Bundle grpc = bundle(GRPC_BUNDLE);
        grpc.stop();
        try {
          assertEquals(List.of(), driverServices());
          await().atMost(WAIT).untilAsserted(() -> assertEquals(Set.of(), grpcThreads()));
          await().atMost(WAIT).untilAsserted(() -> assertEquals(socketsBefore, unixSockets()));
        } finally {
          grpc.start();
        }
      } finally {
        driver.destroyForcibly().waitFor();
      }
    }
  }

  private static Path privateFolder(String name) throws IOException {
    return Files.createTempDirectory("nodelet-" + name + "-",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
  }

  private Bundle bundle(String symbolicName) {
    return Stream.of(bundleContext.getBundles()).filter(b -> b.getSymbolicName().equals(symbolicName)).findFirst()
        .orElseThrow(() -> new AssertionError("no bundle " + symbolicName));
  }

  private List<String> driverServices() throws Exception {
    ServiceReference<?>[] refs = bundleContext.getAllServiceReferences(DeviceSnapshots.class.getName(), null);
    return refs == null ? List.of() : Stream.of(refs)
        .filter(r -> r.getBundle().getSymbolicName().equals(GRPC_BUNDLE))
        .map(r -> String.valueOf(r.getProperty("nodelet.dra.driver"))).collect(Collectors.toList());
  }

  private static Set<String> grpcThreads() {
    return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
        .filter(n -> n.startsWith("nodelet-dra-grpc") || n.startsWith("grpc-")).collect(Collectors.toCollection(TreeSet::new));
  }

  /** The inodes of the unix domain sockets this JVM holds open. */
  private static Set<String> unixSockets() throws IOException {
    Set<String> unix;
    try (Stream<String> lines = Files.lines(Path.of("/proc/self/net/unix"))) {
      // "Num RefCount Protocol Flags Type St Inode Path": the inode is the seventh column
      unix = lines.skip(1).map(l -> l.trim().split("\\s+")).filter(c -> c.length > 6).map(c -> c[6])
          .collect(Collectors.toSet());
    }
    Set<String> held = new TreeSet<>();
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : fds.collect(Collectors.toList())) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith("socket:[")) {
            String inode = target.substring(8, target.length() - 1);
            if (unix.contains(inode)) {
              held.add(inode);
            }
          }
        } catch (IOException e) {
          // the descriptor closed while listing
        }
      }
    }
    return held;
  }
}
