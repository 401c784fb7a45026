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
