package dev.nodelet.kube.internal.watch;

import java.time.Duration;

/**
 * Validated options of an {@link Engine}.
 *
 * @param restartRate re-establishments per second across all reflectors, after failures
 * @param restartBurst re-establishments that may start at once before the rate applies
 * @param initialBackoff first retry delay of one reflector
 * @param maxBackoff longest retry delay of one reflector
 * @param callbackThreads threads that run the callbacks of all reflectors
 * @param watchList whether to try WatchList before LIST then WATCH
 * @param responseTimeout how long a sent watch may wait for its response's headers before it fails and restarts
 */
public record EngineSettings(double restartRate, int restartBurst, Duration initialBackoff, Duration maxBackoff,
    int callbackThreads, boolean watchList, Duration responseTimeout) {

  public static final double DEFAULT_RESTART_RATE = 400;
  public static final int DEFAULT_RESTART_BURST = 100;
  public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(800);
  public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(30);
  public static final int DEFAULT_CALLBACK_THREADS = 2;
  /**
   * An API server answers a watch's headers at once (its events follow); a watch without them after this long sits
   * on a connection that lost its server, which no idle timeout ends, as quiet watches must not time out.
   */
  public static final Duration DEFAULT_RESPONSE_TIMEOUT = Duration.ofSeconds(30);

  public static Builder builder() {
    return new Builder();
  }

  /** Collects options; {@link #build()} checks them and names the first that is wrong. */
  public static final class Builder {
    private double restartRate = DEFAULT_RESTART_RATE;
    private int restartBurst = DEFAULT_RESTART_BURST;
    private Duration initialBackoff = DEFAULT_INITIAL_BACKOFF;
    private Duration maxBackoff = DEFAULT_MAX_BACKOFF;
    private int callbackThreads = DEFAULT_CALLBACK_THREADS;
    private boolean watchList = true;
    private Duration responseTimeout = DEFAULT_RESPONSE_TIMEOUT;

    private Builder() {
    }

    public Builder restartRate(double perSecond) {
      this.restartRate = perSecond;
      return this;
    }

    public Builder restartBurst(int burst) {
      this.restartBurst = burst;
      return this;
    }

    public Builder backoff(Duration initial, Duration max) {
      this.initialBackoff = initial;
      this.maxBackoff = max;
      return this;
    }

    public Builder callbackThreads(int threads) {
      this.callbackThreads = threads;
      return this;
    }

    public Builder watchList(boolean enabled) {
      this.watchList = enabled;
      return this;
    }

    public Builder responseTimeout(Duration timeout) {
      this.responseTimeout = timeout;
      return this;
    }

    /** @throws IllegalArgumentException naming the option that is wrong and what it must be */
    public EngineSettings build() {
      if (!(restartRate > 0) || Double.isInfinite(restartRate)) {
        throw new IllegalArgumentException("restart rate must be a positive number of watches per second, got "
            + restartRate);
      }
      if (restartBurst < 1) {
        throw new IllegalArgumentException("restart burst must be at least 1, got " + restartBurst);
      }
      if (initialBackoff.isNegative() || initialBackoff.isZero()) {
        throw new IllegalArgumentException("initial backoff must be positive, got " + initialBackoff);
      }
      if (maxBackoff.compareTo(initialBackoff) < 0) {
        throw new IllegalArgumentException("max backoff " + maxBackoff + " must not be shorter than the initial "
            + "backoff " + initialBackoff);
      }
      if (callbackThreads < 1 || callbackThreads > 64) {
        throw new IllegalArgumentException("callback threads must be between 1 and 64, got " + callbackThreads);
      }
      if (responseTimeout == null || responseTimeout.isNegative() || responseTimeout.isZero()) {
        throw new IllegalArgumentException("watch response timeout must be positive, got " + responseTimeout);
      }
      return new EngineSettings(restartRate, restartBurst, initialBackoff, maxBackoff, callbackThreads, watchList,
          responseTimeout);
    }
  }
}
