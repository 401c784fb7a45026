package dev.nodelet.dra.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

  private static final Duration INITIAL = Duration.ofSeconds(5);
  private static final Duration MAX = Duration.ofSeconds(180);

  private long now = 0;

  private void next(Backoff backoff) {
    now += Duration.ofSeconds(1).toNanos();
    backoff.next(now);
  }

  @Test
  void withoutJitterStartsAtZeroThenFiveSecondsAndDoublesUpToTheCap() {
    Backoff backoff = new Backoff(INITIAL, MAX, 2.0, () -> 0.0);
    assertThat(backoff.get(now)).as("the kubelet retries the first failure at once").isZero();
    next(backoff);
    assertThat(backoff.get(now)).isEqualTo(Duration.ofSeconds(5));
    next(backoff);
    assertThat(backoff.get(now)).isEqualTo(Duration.ofSeconds(10));
    next(backoff);
    next(backoff);
    next(backoff);
    assertThat(backoff.get(now)).isEqualTo(Duration.ofSeconds(80));
    next(backoff);
    assertThat(backoff.get(now)).isEqualTo(Duration.ofSeconds(160));
    next(backoff);
    assertThat(backoff.get(now)).isEqualTo(MAX);
    next(backoff);
    assertThat(backoff.get(now)).isEqualTo(MAX);
  }

  @Test
  void jitterAddsUpToFactorTimesTheDelayAndTheFirstValueIsNotCapped() {
    Backoff backoff = new Backoff(INITIAL, MAX, 2.0, () -> 0.999_999);
    next(backoff);
    // 5 s + 0.999999 × 2 × 5 s, just under 15 s: jitter on the first value is not capped
    assertThat(backoff.get(now)).isBetween(Duration.ofMillis(14_999), Duration.ofSeconds(15));
    next(backoff);
    // 2 × 15 s + 2 × 15 s ≈ 60 s
    assertThat(backoff.get(now)).isBetween(Duration.ofMillis(59_998), Duration.ofSeconds(60));
    next(backoff);
    assertThat(backoff.get(now)).isEqualTo(MAX);

    Backoff tightCap = new Backoff(INITIAL, INITIAL, 2.0, () -> 0.5);
    next(tightCap);
    assertThat(tightCap.get(now)).as("first value above the cap").isEqualTo(Duration.ofSeconds(10));
    next(tightCap);
    assertThat(tightCap.get(now)).isEqualTo(INITIAL);
  }

  @Test
  void startsOverAfterTwiceTheCapWithoutFailures() {
    Backoff backoff = new Backoff(INITIAL, MAX, 2.0, () -> 0.0);
    next(backoff);
    next(backoff);
    assertThat(backoff.get(now)).isEqualTo(Duration.ofSeconds(10));
    now += 2 * MAX.toNanos(); // exactly twice the cap: not expired yet
    backoff.next(now);
    assertThat(backoff.get(now)).isEqualTo(Duration.ofSeconds(20));
    now += 2 * MAX.toNanos() + 1;
    backoff.next(now);
    assertThat(backoff.get(now)).isEqualTo(INITIAL);
  }

  @Test
  void anExpiredEntryReadsAsZeroSoABreakAfterALongHealthyPeriodIsRetriedAtOnce() {
    Backoff backoff = new Backoff(INITIAL, MAX, 2.0, () -> 0.0);
    for (int i = 0; i < 8; i++) {
      next(backoff);
    }
    assertThat(backoff.get(now)).isEqualTo(MAX);
    now += 2 * MAX.toNanos() + 1; // a long healthy period
    assertThat(backoff.get(now)).as("the delay read before the next failure is recorded").isZero();
    backoff.next(now);
    assertThat(backoff.get(now)).isEqualTo(INITIAL);
  }
}
