package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The kubelet's container back-off: 10 s doubling to 5 min, reset after 10 min of running. */
class ContainerBackoffTest {

  private static final Instant T0 = Instant.parse("2026-11-28T10:00:00Z");

  private final ContainerRun container = new ContainerRun("app", "example/app:1", "pod/app");

  @Test
  void doublesFromTenSecondsToFiveMinutes() {
    Instant now = T0;
    assertThat(container.retryAt()).isEqualTo(Instant.MIN);
    long[] expected = {10, 20, 40, 80, 160, 300, 300};
    for (long seconds : expected) {
      assertThat(container.backoffFailed(now, Duration.ZERO)).isEqualTo(Duration.ofSeconds(seconds));
      Instant until = container.retryAt();
      assertThat(Duration.between(now, until)).isEqualTo(Duration.ofSeconds(seconds));
      assertThat(container.backingOff(until.minusMillis(1))).isTrue();
      assertThat(container.backingOff(until)).isFalse();
      now = until;
    }
  }

  @Test
  void aContainerThatRanTenMinutesStartsAgainAtTenSeconds() {
    container.backoffFailed(T0, Duration.ZERO);
    assertThat(container.backoffFailed(T0, Duration.ofMinutes(9).plusSeconds(59))).isEqualTo(Duration.ofSeconds(20));
    assertThat(container.backoffFailed(T0, Duration.ofMinutes(10))).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void aResetForgetsTheFailures() {
    container.backoffFailed(T0, Duration.ZERO);
    container.backoffFailed(T0, Duration.ZERO);
    container.backoff.reset();
    assertThat(container.backingOff(T0)).isFalse();
    assertThat(container.retryAt()).isEqualTo(Instant.MIN);
    assertThat(container.backoffFailed(T0, Duration.ZERO)).isEqualTo(Duration.ofSeconds(10));
  }
}
