package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The kubelet's getPhase for containers run as bundles. */
class StatusComposerTest {

  private static final Instant T = Instant.parse("2026-11-28T10:00:00Z");

  private static ContainerRun waiting() {
    return new ContainerRun("c", "i", "l");
  }

  private static ContainerRun running() {
    ContainerRun c = waiting();
    c.running(T);
    return c;
  }

  private static ContainerRun ended(int code) {
    ContainerRun c = running();
    c.terminated(T, code, null);
    return c;
  }

  private static ContainerRun crashLooping() {
    ContainerRun c = ended(1);
    c.keepTermination();
    c.waiting("CrashLoopBackOff", "back-off");
    return c;
  }

  @Test
  void phases() {
    assertThat(StatusComposer.phase(List.of(waiting(), running()), "Always")).isEqualTo("Pending");
    assertThat(StatusComposer.phase(List.of(running(), crashLooping()), "Always")).isEqualTo("Running");
    assertThat(StatusComposer.phase(List.of(crashLooping()), "Always")).isEqualTo("Running");
    assertThat(StatusComposer.phase(List.of(ended(0), ended(0)), "Never")).isEqualTo("Succeeded");
    assertThat(StatusComposer.phase(List.of(ended(0), ended(1)), "Never")).isEqualTo("Failed");
    assertThat(StatusComposer.phase(List.of(ended(0)), "OnFailure")).isEqualTo("Succeeded");
    assertThat(StatusComposer.phase(List.of(ended(0)), "Always")).isEqualTo("Running");
  }
}
