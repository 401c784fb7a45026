package dev.nodelet.kube.watch;

import dev.nodelet.kube.internal.watch.Engine;
import dev.nodelet.kube.internal.watch.EngineSettings;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Objects;
import org.osgi.annotation.versioning.ProviderType;

/**
 * {@link Reflectors} for plain Java programs: the owner of the callback threads, the timer and the restart bucket that
 * its reflectors share. {@link #close()} closes every reflector and leaves no thread; the client stays open (it
 * belongs to the caller).
 */
@ProviderType
public interface ReflectorEngine extends Reflectors, AutoCloseable {

  /**
   * @return how many watches were re-established so far (after a cut, a failure or an API server restart), each
   *     counted as its request starts, past the restart bucket; first starts are not counted
   */
  long restarts();

  /** Closes every reflector created here and stops the threads. Idempotent. */
  @Override
  void close();

  /**
   * @param client the client whose HTTP client, server URL and credentials the reflectors use
   * @return a builder with the defaults of the {@code nodelet-kube} service
   */
  static Builder builder(KubernetesClient client) {
    return new Builder(Objects.requireNonNull(client, "client"));
  }

  /** Options of a {@link ReflectorEngine}; {@link #build()} validates them. */
  final class Builder {
    private final KubernetesClient client;
    private final EngineSettings.Builder settings = EngineSettings.builder();

    private Builder(KubernetesClient client) {
      this.client = client;
    }

    /**
     * @param perSecond how many watches may be re-established per second after failures, across all reflectors
     * @return this builder
     */
    public Builder restartRate(double perSecond) {
      settings.restartRate(perSecond);
      return this;
    }

    /**
     * @param burst how many re-establishments may start at once before the rate applies
     * @return this builder
     */
    public Builder restartBurst(int burst) {
      settings.restartBurst(burst);
      return this;
    }

    /**
     * @param initial the first retry delay of one reflector after a failure (doubled per failure, with jitter)
     * @param max the longest retry delay
     * @return this builder
     */
    public Builder backoff(Duration initial, Duration max) {
      settings.backoff(Objects.requireNonNull(initial, "initial"), Objects.requireNonNull(max, "max"));
      return this;
    }

    /**
     * @param threads how many threads run the callbacks of all reflectors
     * @return this builder
     */
    public Builder callbackThreads(int threads) {
      settings.callbackThreads(threads);
      return this;
    }

    /**
     * @param enabled whether to try WatchList ({@code sendInitialEvents}) before falling back to LIST then WATCH
     * @return this builder
     */
    public Builder watchList(boolean enabled) {
      settings.watchList(enabled);
      return this;
    }

    /**
     * @return a new engine; close it when done
     * @throws IllegalArgumentException naming the option that cannot be used and why
     */
    public ReflectorEngine build() {
      return new Engine(client, settings.build());
    }
  }
}
