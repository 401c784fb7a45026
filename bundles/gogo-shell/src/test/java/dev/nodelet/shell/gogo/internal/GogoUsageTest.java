package dev.nodelet.shell.gogo.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import dev.nodelet.dra.claims.ContainerDevices;
import dev.nodelet.dra.claims.DeviceHealthInfo;
import dev.nodelet.pods.ContainerInfo;
import dev.nodelet.pods.PodInfo;
import dev.nodelet.shell.views.PodViews;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * In Gogo's own runtime, a wrong argument gets the command's usage, not Gogo's "Cannot coerce ...", and the
 * arguments of {@code nodelet:pods --bundles [<namespace>]} reach it.
 */
class GogoUsageTest {

  private final ThreadIOImpl threadIo = new ThreadIOImpl();
  private CommandProcessorImpl processor;
  private CommandSession session;
  private ObjectCacheCommands objects;

  @BeforeEach
  void start() {
    threadIo.start();
    processor = new CommandProcessorImpl(threadIo);
    objects = new ObjectCacheCommands();
    for (String function : new String[] {"pods", "objects", "get", "strategy", "watch", "watchstats"}) {
      processor.addCommand("nodelet", objects, function);
    }
    // the usage needs no status service
    processor.addCommand("nodelet", new DraCommands(null), "drivers");
    processor.addCommand("nodelet", new DraCommands(null), "slices");
    processor.addCommand("nodelet", new ClaimsCommands(null), "claims");
    session = processor.createSession(new ByteArrayInputStream(new byte[0]), new ByteArrayOutputStream(),
        new ByteArrayOutputStream());
  }

  @AfterEach
  void stop() {
    session.close();
    processor.stop();
    threadIo.stop();
  }

  @Test
  void aWrongArgumentGetsTheCommandsUsage() {
    assertThatThrownBy(() -> session.execute("nodelet:get Token"))
        .hasMessage("nodelet:get: wrong arguments: Token\n"
            + "usage: nodelet:get [--show-secret] <configmap|secret> <namespace> <name>");
    assertThatThrownBy(() -> session.execute("nodelet:get"))
        .hasMessage("nodelet:get: arguments missing\n"
            + "usage: nodelet:get [--show-secret] <configmap|secret> <namespace> <name>");
    assertThatThrownBy(() -> session.execute("nodelet:watch"))
        .hasMessage("nodelet:watch: arguments missing\nusage: nodelet:watch <configmap|secret> [<namespace> [<name>]]");
    assertThatThrownBy(() -> session.execute("nodelet:pods a b"))
        .hasMessage("nodelet:pods: wrong arguments: a b\n" + ObjectCacheCommandsTest.POD_USAGE);
    assertThatThrownBy(() -> session.execute("nodelet:pods --bundles a b"))
        .hasMessage("nodelet:pods: wrong arguments: --bundles a b\n" + ObjectCacheCommandsTest.POD_USAGE);
    assertThatThrownBy(() -> session.execute("nodelet:strategy a b c d"))
        .hasMessageStartingWith("nodelet:strategy: wrong arguments: a b c d\nusage: nodelet:strategy");
    for (String command : new String[] {"objects", "watchstats", "drivers", "slices", "claims"}) {
      assertThatThrownBy(() -> session.execute("nodelet:" + command + " extra"))
          .hasMessage("nodelet:" + command + ": wrong arguments: extra\nusage: nodelet:" + command);
    }
  }

  @Test
  void rightArgumentsStillReachTheirCommand() throws Exception {
    assertThat(session.execute("nodelet:objects")).asString().startsWith("RESOURCE");
    assertThat(session.execute("nodelet:watchstats")).asString().startsWith("RESOURCE");
    assertThatThrownBy(() -> session.execute("nodelet:get configmap ns name"))
        .as("three arguments reach get itself").hasMessageStartingWith("no manager of configmap");
    assertThatThrownBy(() -> session.execute("nodelet:pods --all"))
        .hasMessage("nodelet:pods: unknown option --all, the options are --receipts and --bundles\n"
            + ObjectCacheCommandsTest.POD_USAGE);
  }

  @Test
  void podsWithBundlesListsThePodsRunAsBundlesOrSaysNodeModePodsAreOff() throws Exception {
    assertThat(session.execute("nodelet:pods --bundles")).isEqualTo(PodViews.OFF);

    objects.podsStatus = () -> List.of(
        new PodInfo("default", "web", "uid-1", "Running", "", List.of(new ContainerInfo("app",
            "mvn:org.example/app/1.0.0", ContainerInfo.State.RUNNING, "", "", Instant.parse("2026-11-28T10:00:00Z"),
            null, 0, 0, true, "org.example.app",
            Optional.of(new ContainerInfo.BundleInfo(42, "org.example.app", "1.0.0", "ACTIVE"))))),
        new PodInfo("edge", "gw", "uid-2", "Pending", "", List.of(new ContainerInfo("c0",
            "mvn:org.example/gw/1.0.0", ContainerInfo.State.WAITING, "ContainerCreating", "", null, null, 0, 0,
            false, "dev.nodelet.pod.c0", Optional.empty()))));
    assertThat(session.execute("nodelet:pods --bundles")).asString().contains(
        "default/web  Running  uid=uid-1\n  app  running since 2026-11-28T10:00:00Z  restarts=0  ready=true"
            + "  image=mvn:org.example/app/1.0.0  bundle=42 org.example.app 1.0.0 ACTIVE  pid=org.example.app\n",
        "edge/gw  Pending");
    assertThat(session.execute("nodelet:pods --bundles edge")).asString()
        .startsWith("edge/gw  Pending  uid=uid-2\n  c0  waiting ContainerCreating").doesNotContain("default/web");
    assertThat(session.execute("nodelet:pods --bundles other"))
        .isEqualTo("no pods run as bundles in namespace other\n");
    assertThatThrownBy(() -> session.execute("nodelet:pods --receipts edge"))
        .hasMessage("nodelet:pods: wrong arguments: --receipts edge\n" + ObjectCacheCommandsTest.POD_USAGE);
  }

  /** A claim manager's answers as plain values. */
  private record Status(List<ClaimInfo> claims, List<ContainerDevices> containers, List<DeviceHealthInfo> health,
      Optional<String> checkpointProblem) implements ClaimStatus {
  }

  @Test
  void claimsShowsPerContainerEntryItsCdiIdsOrWhyItHasNone() throws Exception {
    processor.removeCommand("nodelet", "claims"); // the one without a status
    processor.addCommand("nodelet", new ClaimsCommands(new Status(
        List.of(new ClaimInfo("default", "claim-a", "uid-a", ClaimInfo.State.FAILED, List.of("default/pod-1"),
            Map.of(), "NodePrepareResources: device busy", Instant.parse("2026-11-28T10:00:00Z"))),
        List.of(new ContainerDevices("default", "pod-1", "main", "gpu", null, List.of(),
            "ResourceClaim default/claim-a is not prepared (FAILED): NodePrepareResources: device busy"),
            new ContainerDevices("default", "pod-2", "main", "gpu", "big", List.of("k8s.gpu.example.com/gpu=gpu-0"))),
        List.of(), Optional.empty())), "claims");

    assertThat(session.execute("nodelet:claims")).isEqualTo(
        "default/claim-a  FAILED  uid=uid-a  pods=default/pod-1\n"
            + "  error: NodePrepareResources: device busy (retry at 2026-11-28T10:00:00Z)\n"
            + "container default/pod-1/main  claim=gpu  cdi=-\n"
            + "  error: ResourceClaim default/claim-a is not prepared (FAILED): NodePrepareResources: device busy\n"
            + "container default/pod-2/main  claim=gpu/big  cdi=k8s.gpu.example.com/gpu=gpu-0\n");
  }
}
