package dev.nodelet.kube.internal.watch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.kube.watch.ReflectorException;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A reflector's retry delays with the engine's random numbers and clock: no request is sent. */
class FailureBackoffTest {

  private static final Logger LOG = LoggerFactory.getLogger(FailureBackoffTest.class);
  private static final ReflectorException ERROR = new ReflectorException("the watch failed", 503, null);

  // the address is never connected to: the engine's threads and connections start on first use
  private final KubernetesClient client = new KubernetesClientBuilder()
      .withConfig(new ConfigBuilder().withMasterUrl("http://127.0.0.1:9").build()).build();
  private final double[] draw = {0};
  private final AtomicLong now = new AtomicLong();
  private final Engine engine = new Engine(client, EngineSettings.builder().build(), now::get, () -> draw[0]);

  @AfterEach
  void close() {
    engine.close();
    client.close();
  }

  @Test
  void theDefaultsDoubleFromZeroPointEightToThirtySecondsAndEachWaitIsInTheUpperHalf() {
    FailureBackoff backoff = new FailureBackoff(engine);
    long[] lowest = {400, 800, 1_600, 3_200, 6_400, 12_800, 15_000, 15_000};
    for (long millis : lowest) {
      now.addAndGet(Duration.ofSeconds(1).toNanos());
      assertThat(backoff.failed(LOG, ERROR)).isEqualTo(Duration.ofMillis(millis).toNanos());
    }
    assertThat(backoff.failing()).isTrue();

    backoff.recovered(LOG, "configmaps");
    assertThat(backoff.failing()).isFalse();
    draw[0] = 0.5;
    // a new run of failures starts at 0.8 s again: 0.4 s + 0.5 × 0.4 s
    assertThat(backoff.failed(LOG, ERROR)).isEqualTo(Duration.ofMillis(600).toNanos());
    draw[0] = 0.999_999;
    assertThat(backoff.failed(LOG, ERROR)).isBetween(Duration.ofMillis(1_599).toNanos(),
        Duration.ofMillis(1_600).toNanos());
  }
}
