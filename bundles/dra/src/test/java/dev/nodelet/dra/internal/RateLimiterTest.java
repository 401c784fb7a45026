package dev.nodelet.dra.internal;

import dev.nodelet.dra.runtime.ManualScheduler;
import dev.nodelet.dra.runtime.ControllerOptions;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RateLimiterTest {

  private final ManualScheduler time = new ManualScheduler();

  private RateLimiter<String> defaults() {
    ControllerOptions o = ControllerOptions.DEFAULTS;
    return new RateLimiter<>(o.rateLimitBaseDelay(), o.rateLimitMaxDelay(), o.rateLimitQps(), o.rateLimitBurst(),
        time::nanoTime);
  }

  @Test
  void perItemDelayDoublesFromFiveMillisecondsAndIsResetByForget() {
    RateLimiter<String> limiter = defaults();
    assertThat(limiter.when("a")).isEqualTo(Duration.ofMillis(5));
    assertThat(limiter.when("a")).isEqualTo(Duration.ofMillis(10));
    assertThat(limiter.when("a")).isEqualTo(Duration.ofMillis(20));
    assertThat(limiter.when("b")).as("items are counted apart").isEqualTo(Duration.ofMillis(5));
    assertThat(limiter.failures("a")).isEqualTo(3);

    limiter.forget("a");
    assertThat(limiter.failures("a")).isZero();
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
  void rejectsNonsense() {
    assertThatThrownBy(() -> new RateLimiter<String>(Duration.ofMillis(5), Duration.ofMillis(1), 10, 100,
        time::nanoTime)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new RateLimiter<String>(Duration.ofMillis(5), Duration.ofMillis(10), 0, 100,
        time::nanoTime)).isInstanceOf(IllegalArgumentException.class);
  }
}
