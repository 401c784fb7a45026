package dev.nodelet.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RateLimiterTest {

  private final DrivableScheduler time = new DrivableScheduler();

  /** client-go's DefaultControllerRateLimiter: 5 ms to 1000 s per item, 10 qps with a burst of 100 overall. */
  private RateLimiter<String> defaults() {
    return RateLimiter.controller(Duration.ofMillis(5), Duration.ofSeconds(1000), 10, 100, time::nanoTime);
  }

  @Test
  void perItemDelayDoublesFromFiveMillisecondsAndIsResetByForget() {
    RateLimiter<String> limiter = defaults();
    assertThat(limiter.when("a")).isEqualTo(Duration.ofMillis(5));
    assertThat(limiter.when("a")).isEqualTo(Duration.ofMillis(10));
    assertThat(limiter.when("a")).isEqualTo(Duration.ofMillis(20));
    assertThat(limiter.when("b")).as("items are counted apart").isEqualTo(Duration.ofMillis(5));
    assertThat(limiter.numRequeues("a")).isEqualTo(3);

    limiter.forget("a");
    assertThat(limiter.numRequeues("a")).isZero();
    assertThat(limiter.when("a")).isEqualTo(Duration.ofMillis(5));
  }

  @Test
  void perItemDelayIsCappedAtOneThousandSeconds() {
    RateLimiter<String> limiter = defaults();
    Duration last = Duration.ZERO;
    for (int i = 0; i < 80; i++) {
      last = limiter.when("a");
      time.advance(Duration.ofSeconds(1)); // keep the token bucket full
    }
    assertThat(last).isEqualTo(Duration.ofSeconds(1000));
    // 5 ms × 2^17 = 655 s is still below the cap, 2^18 is above it
    limiter.forget("a");
    for (int i = 0; i < 17; i++) {
      limiter.when("a");
      time.advance(Duration.ofSeconds(1));
    }
    assertThat(limiter.when("a")).isEqualTo(Duration.ofMillis(5L << 17));
    time.advance(Duration.ofSeconds(1));
    assertThat(limiter.when("a")).isEqualTo(Duration.ofSeconds(1000));
  }

  @Test
  void tokenBucketAllowsABurstOfOneHundredThenTenPerSecond() {
    RateLimiter<String> limiter = defaults();
    for (int i = 0; i < 100; i++) {
      // distinct items, so only the bucket can delay them
      assertThat(limiter.when("item-" + i)).isEqualTo(Duration.ofMillis(5));
    }
    assertThat(limiter.when("item-100")).isEqualTo(Duration.ofMillis(100));
    assertThat(limiter.when("item-101")).isEqualTo(Duration.ofMillis(200));

    time.advance(Duration.ofSeconds(1)); // ten tokens back: the debt of two is paid, eight remain
    for (int i = 0; i < 8; i++) {
      assertThat(limiter.when("later-" + i)).isEqualTo(Duration.ofMillis(5));
    }
    assertThat(limiter.when("later-8")).isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void theLargerOfBothDelaysWins() {
    RateLimiter<String> limiter = defaults();
    for (int i = 0; i < 100; i++) {
      limiter.when("burst-" + i);
    }
    limiter.when("a"); // bucket: 100 ms, item: 5 ms
    time.advance(Duration.ofMillis(100));
    // bucket: empty again after this one → 100 ms; item: 10 ms
    assertThat(limiter.when("a")).isEqualTo(Duration.ofMillis(100));

    time.advance(Duration.ofSeconds(10)); // the bucket is full again
    for (int i = 0; i < 7; i++) {
      limiter.when("a");
    }
    // tenth failure: 5 ms × 2^9, the bucket adds nothing
    assertThat(limiter.when("a")).isEqualTo(Duration.ofMillis(2560));
  }

  @Test
  void eachLimiterAloneKeepsItsOwnRule() {
    RateLimiter<String> item = RateLimiter.itemExponential(Duration.ofSeconds(1), Duration.ofSeconds(3));
    assertThat(item.when("a")).isEqualTo(Duration.ofSeconds(1));
    assertThat(item.when("a")).isEqualTo(Duration.ofSeconds(2));
    assertThat(item.when("a")).isEqualTo(Duration.ofSeconds(3));

    RateLimiter<String> bucket = RateLimiter.bucket(1, 1, time::nanoTime);
    assertThat(bucket.when("a")).isZero();
    assertThat(bucket.when("b")).isEqualTo(Duration.ofSeconds(1));
    bucket.forget("b");
    assertThat(bucket.numRequeues("b")).as("the bucket keeps nothing per item").isZero();
  }

  @Test
  void rejectsNonsenseWithTheFigures() {
    assertThatThrownBy(() -> RateLimiter.itemExponential(Duration.ofMillis(5), Duration.ofMillis(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("base PT0.005S, max PT0.001S");
    assertThatThrownBy(() -> RateLimiter.bucket(0, 100, time::nanoTime))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("qps 0.0");
    assertThatThrownBy(() -> RateLimiter.maxOf()).isInstanceOf(IllegalArgumentException.class);
  }
}
