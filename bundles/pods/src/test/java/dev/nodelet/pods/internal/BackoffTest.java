package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The kubelet's container back-off: 10 s doubling to 5 min, reset after 10 min of running. */
class BackoffTest {

  private static final Instant T0 = Instant.parse("2026-11-28T10:00:00Z");

  @Test
  void doublesFromTenSecondsToFiveMinutes() {
    Backoff backoff = new Backoff();
    Instant now = T0;
    long[] expected = {10, 20, 40, 80, 160, 300, 300};
    for (long seconds : expected) {
      Instant until = backoff.failed(now, Duration.ZERO);
      assertThat(Duration.between(now, until)).isEqualTo(Duration.ofSeconds(seconds));
      assertThat(backoff.waiting(until.minusMillis(1))).isTrue();
      assertThat(backoff.waiting(until)).isFalse();
      now = until;
    }
  }

  @Test
  void aContainerThatRanTenMinutesStartsAgainAtTenSeconds() {
    Backoff backoff = new Backoff();
    backoff.failed(T0, Duration.ZERO);
    backoff.failed(T0, Duration.ofMinutes(9).plusSeconds(59));
    assertThat(backoff.delay()).isEqualTo(Duration.ofSeconds(20));
    backoff.failed(T0, Duration.ofMinutes(10));
    assertThat(backoff.delay()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void aResetForgetsTheFailures() {
    Backoff backoff = new Backoff();
    backoff.failed(T0, Duration.ZERO);
    backoff.failed(T0, Duration.ZERO);
    backoff.reset();
    assertThat(backoff.waiting(T0)).isFalse();
    assertThat(Duration.between(T0, backoff.failed(T0, Duration.ZERO))).isEqualTo(Duration.ofSeconds(10));
  }
}
