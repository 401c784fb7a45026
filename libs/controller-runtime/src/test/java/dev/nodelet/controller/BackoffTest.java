package dev.nodelet.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

  private static final Duration INITIAL = Duration.ofSeconds(5);
  private static final Duration MAX = Duration.ofSeconds(180);

  private final DrivableScheduler time = new DrivableScheduler();

  /** client-go's flowcontrol.Backoff as the kubelet monitors a DRA driver: 5 s to 180 s, jitter 2, idle 2 × max. */
  private Backoff monitor(double random) {
    return Backoff.exponential(INITIAL, MAX).jitter(2.0, () -> random).forgetAfterIdle(MAX.multipliedBy(2)).build();
  }

  private Duration failAfterASecond(Backoff backoff) {
    time.advance(Duration.ofSeconds(1));
    return backoff.failed(time.nanoTime());
  }

  @Test
  void withoutJitterStartsAtZeroThenFiveSecondsAndDoublesUpToTheCap() {
    Backoff backoff = monitor(0.0);
    assertThat(backoff.delay(time.nanoTime())).as("nothing to wait for before a failure").isZero();
    long[] expected = {5, 10, 20, 40, 80, 160, 180, 180};
    for (long seconds : expected) {
      assertThat(failAfterASecond(backoff)).isEqualTo(Duration.ofSeconds(seconds));
      assertThat(backoff.delay(time.nanoTime())).isEqualTo(Duration.ofSeconds(seconds));
    }
    assertThat(backoff.failures()).isEqualTo(expected.length);
  }

  @Test
  void jitterAddsUpToFactorTimesTheDelayAndTheFirstValueIsNotCapped() {
    Backoff backoff = monitor(0.999_999);
    // 5 s + 0.999999 × 2 × 5 s, just under 15 s: jitter on the first value is not capped
    assertThat(failAfterASecond(backoff)).isBetween(Duration.ofMillis(14_999), Duration.ofSeconds(15));
    // 2 × 15 s + 2 × 15 s ≈ 60 s
    assertThat(failAfterASecond(backoff)).isBetween(Duration.ofMillis(59_998), Duration.ofSeconds(60));
    assertThat(failAfterASecond(backoff)).isEqualTo(MAX);

    Backoff tightCap = Backoff.exponential(INITIAL, INITIAL).jitter(2.0, () -> 0.5).build();
    assertThat(failAfterASecond(tightCap)).as("first value above the cap").isEqualTo(Duration.ofSeconds(10));
    assertThat(failAfterASecond(tightCap)).isEqualTo(INITIAL);
  }

  @Test
  void startsOverAfterTheIdleTimeWithoutFailures() {
    Backoff backoff = monitor(0.0);
    failAfterASecond(backoff);
    failAfterASecond(backoff);
    time.advance(MAX.multipliedBy(2)); // exactly the idle time: not forgotten yet
    assertThat(backoff.failed(time.nanoTime())).isEqualTo(Duration.ofSeconds(20));
    time.advance(MAX.multipliedBy(2).plusNanos(1));
    assertThat(backoff.delay(time.nanoTime())).as("a break after a long healthy period is retried at once")
        .isZero();
    assertThat(backoff.failed(time.nanoTime())).isEqualTo(INITIAL);
  }

  @Test
  void theKubeletsCrashBackoffDoublesFromTenSecondsToFiveMinutesAndResetsAfterTenMinutesOfRunning() {
    Backoff backoff = Backoff.exponential(Duration.ofSeconds(10), Duration.ofMinutes(5))
        .resetAfterRunning(Duration.ofMinutes(10)).build();
    long[] expected = {10, 20, 40, 80, 160, 300, 300};
    for (long seconds : expected) {
      Duration delay = backoff.failed(time.nanoTime(), Duration.ofMinutes(9).plusSeconds(59));
      assertThat(delay).isEqualTo(Duration.ofSeconds(seconds));
      time.advance(delay.minusMillis(1));
      assertThat(backoff.waiting(time.nanoTime())).isTrue();
      assertThat(backoff.remaining(time.nanoTime())).isEqualTo(Duration.ofMillis(1));
      time.advance(Duration.ofMillis(1));
      assertThat(backoff.waiting(time.nanoTime())).isFalse();
    }
    assertThat(backoff.failed(time.nanoTime(), Duration.ofMinutes(10))).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void aResetForgetsTheFailures() {
    Backoff backoff = Backoff.exponential(Duration.ofSeconds(10), Duration.ofMinutes(5)).build();
    backoff.failed(time.nanoTime());
    backoff.failed(time.nanoTime());
    assertThat(backoff.waiting(time.nanoTime())).isTrue();
    backoff.reset();
    assertThat(backoff.waiting(time.nanoTime())).isFalse();
    assertThat(backoff.failures()).isZero();
    assertThat(backoff.failed(time.nanoTime())).isEqualTo(Duration.ofSeconds(10));
    assertThat(backoff.notBeforeNanos()).isEqualTo(time.nanoTime() + Duration.ofSeconds(10).toNanos());
  }

  @Test
  void manyFailuresStayAtTheCapWithoutOverflow() {
    Backoff backoff = Backoff.exponential(Duration.ofNanos(1), Duration.ofDays(365 * 200)).build();
    Duration last = Duration.ZERO;
    for (int i = 0; i < 200; i++) {
      last = backoff.failed(time.nanoTime());
    }
    assertThat(last).isEqualTo(Duration.ofDays(365 * 200));
    assertThat(Backoff.doubled(Duration.ofMillis(5), 1_000, Duration.ofSeconds(1000)))
        .isEqualTo(Duration.ofSeconds(1000));
  }

  /** The reflectors' retry: 0.8 s doubling to 30 s, each wait drawn from the upper half of its delay. */
  @Test
  void upperHalfJitterDrawsEachWaitFromTheUpperHalfOfTheUnjitteredDelay() {
    double[] draw = {0};
    Backoff backoff = Backoff.exponential(Duration.ofMillis(800), Duration.ofSeconds(30))
        .jitterUpperHalf(() -> draw[0]).build();
    long[] halves = {400, 800, 1_600, 3_200, 6_400, 12_800, 15_000, 15_000};
    for (long millis : halves) {
      assertThat(failAfterASecond(backoff)).as("the lower end").isEqualTo(Duration.ofMillis(millis));
      assertThat(backoff.remaining(time.nanoTime())).isEqualTo(Duration.ofMillis(millis));
    }

    backoff.reset();
    draw[0] = 0.999_999;
    // just under the whole delay, which still doubles from 0.8 s: the draw is not fed back into the doubling
    long[] delays = {800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000, 30_000};
    for (long millis : delays) {
      Duration wait = failAfterASecond(backoff);
      assertThat(wait).isBetween(Duration.ofMillis(millis).minusMillis(1), Duration.ofMillis(millis));
      assertThat(backoff.delay(time.nanoTime())).as("the wait drawn").isEqualTo(wait);
      assertThat(backoff.notBeforeNanos()).isEqualTo(time.nanoTime() + wait.toNanos());
    }

    draw[0] = 0.5;
    Backoff odd = Backoff.exponential(Duration.ofNanos(7), Duration.ofNanos(7)).jitterUpperHalf(() -> draw[0]).build();
    assertThat(odd.failed(time.nanoTime())).as("7/2 + 0.5 × 7/2 in whole nanoseconds").isEqualTo(Duration.ofNanos(4));
  }

  @Test
  void theLastJitterModeChosenApplies() {
    Backoff factor = Backoff.exponential(INITIAL, MAX).jitterUpperHalf(() -> 0.5).jitter(1.0, () -> 0.5).build();
    assertThat(factor.failed(time.nanoTime())).isEqualTo(Duration.ofMillis(7_500));
    Backoff upperHalf = Backoff.exponential(INITIAL, MAX).jitter(1.0, () -> 0.5).jitterUpperHalf(() -> 0.5).build();
    assertThat(upperHalf.failed(time.nanoTime())).isEqualTo(Duration.ofMillis(3_750));
    assertThat(upperHalf.failed(time.nanoTime())).as("10 s, not doubled from 7.5 s")
        .isEqualTo(Duration.ofMillis(7_500));
  }

  @Test
  void rejectsNonsenseWithTheFigures() {
    assertThatThrownBy(() -> Backoff.exponential(Duration.ZERO, MAX)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("initial PT0S");
    assertThatThrownBy(() -> Backoff.exponential(MAX, INITIAL)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("max PT5S");
    assertThatThrownBy(() -> Backoff.exponential(INITIAL, MAX).jitter(-1, () -> 0))
        .hasMessageContaining("jitter factor must not be negative, was -1");
  }
}
