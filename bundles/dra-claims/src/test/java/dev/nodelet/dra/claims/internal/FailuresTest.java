package dev.nodelet.dra.claims.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** The claim manager's retry of a failed step: 500 ms doubling to 30 s per claim, from the start after a success. */
class FailuresTest {

  private static final Instant T0 = Instant.parse("2026-11-28T10:00:00Z");

  private final Failures failures = new Failures(Clock.fixed(T0, ZoneOffset.UTC), Duration.ofMillis(500),
      Duration.ofSeconds(30));

  @Test
  void aClaimsRetryDoublesFromTheFirstDelayToTheCapAndAClearStartsItOver() {
    long[] expected = {500, 1000, 2000, 4000, 8000, 16000, 30000, 30000};
    for (int i = 0; i < expected.length; i++) {
      failures.fail("default", "gpu", "pod-1", "driver not registered");
      Failures.Failure f = failures.get("default/gpu");
      assertThat(f.attempts()).isEqualTo(i + 1);
      assertThat(f.nextRetry()).isEqualTo(T0.plusMillis(expected[i]));
    }
    failures.fail("default", "other", null, "unprepare failed");
    assertThat(failures.get("default/other").nextRetry()).as("claims are counted apart").isEqualTo(T0.plusMillis(500));
    assertThat(failures.podWaits("pod-1", T0.plusMillis(29_999))).isTrue();
    assertThat(failures.nextRetry()).contains(T0.plusMillis(500));

    failures.clear("default/gpu");
    failures.fail("default", "gpu", "pod-1", "driver not registered");
    assertThat(failures.get("default/gpu").attempts()).isEqualTo(1);
    assertThat(failures.get("default/gpu").nextRetry()).isEqualTo(T0.plusMillis(500));

    failures.fail("default", "gpu", "pod-1", "driver not registered");
    failures.clearIf(f -> f.podUid() != null);
    failures.fail("default", "gpu", "pod-1", "driver not registered");
    assertThat(failures.get("default/gpu").nextRetry()).as("cleared by a predicate: forgotten too")
        .isEqualTo(T0.plusMillis(500));
  }

  @Test
  void aCapBelowTheFirstDelayIsEveryDelay() {
    Failures capped = new Failures(Clock.fixed(T0, ZoneOffset.UTC), Duration.ofSeconds(2), Duration.ofSeconds(1));
    capped.fail("default", "gpu", null, "failed");
    capped.fail("default", "gpu", null, "failed");
    assertThat(capped.get("default/gpu").nextRetry()).isEqualTo(T0.plusSeconds(1));
  }
}
