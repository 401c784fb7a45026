package dev.nodelet.dra.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.controller.Backoff;
import dev.nodelet.controller.DrivableScheduler;
import dev.nodelet.controller.RateLimiter;
import dev.nodelet.controller.StreamMonitor;
import dev.nodelet.controller.WorkQueue;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a dead driver's failing stream writes to the log (SLF4J's simple logger at INFO writes to whatever
 * {@code System.err} is at each line): one WARN line for the first failure, nothing above DEBUG for the ones that
 * follow, never a stack trace; a snapshot starts over. The monitor is the one the controller builds for a driver.
 */
class SnapshotMonitorLoggingTest {

  private static final String FAILED = "The snapshot stream of DRA driver gpu.example.com failed";

  private final DrivableScheduler time = new DrivableScheduler();
  private final PrintStream original = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
  private final TestDriver driver = new TestDriver("gpu.example.com");
  private StreamMonitor monitor;

  @BeforeEach
  void capture() {
    System.setErr(new PrintStream(new OutputStream() {
      @Override
      public void write(int b) {
        original.write(b);
        captured.write(b);
      }
    }, true, StandardCharsets.UTF_8));
    Backoff backoff = Backoff.exponential(Duration.ofSeconds(5), Duration.ofSeconds(180)).build();
    SnapshotSink sink = new SnapshotSink(new DriverTable(),
        new WorkQueue<String>(RateLimiter.itemExponential(Duration.ofMillis(5), Duration.ofSeconds(1)), time),
        new KubernetesSerialization(), Clock.systemUTC());
    monitor = sink.monitor("gpu.example.com", driver, time, backoff);
    monitor.start();
  }

  @AfterEach
  void restore() {
    monitor.stop();
    System.setErr(original);
  }

  private String log() {
    return captured.toString(StandardCharsets.UTF_8);
  }

  /** Fails the current stream as a dead driver's does, and lets the monitor subscribe again. */
  private void failAndRetry() {
    driver.fail(new IllegalStateException("ListAndWatchResources of DRA driver gpu.example.com on"
        + " /plugins/gpu/dra.sock failed: UNAVAILABLE: io exception"), true);
    time.advance(Duration.ofMinutes(5));
  }

  @Test
  void aDeadDriverIsOneWarningWithoutStackTraceNotOnePerAttempt() {
    for (int i = 0; i < 4; i++) {
      failAndRetry();
    }
    assertThat(driver.subscriptions).hasValue(5);
    assertThat(log().lines().filter(l -> l.contains(FAILED))).singleElement().satisfies(line -> assertThat(line)
        .contains("WARN")
        .contains("failed: ListAndWatchResources of DRA driver gpu.example.com on /plugins/gpu/dra.sock failed:"
            + " UNAVAILABLE: io exception; subscribing again in 0 ms"));
    assertThat(log()).doesNotContain("\tat ").doesNotContain("IllegalStateException");
  }

  @Test
  void aSnapshotStartsOverSoTheNextFailureWarnsAgain() {
    failAndRetry();
    failAndRetry();
    driver.publish(List.of());
    assertThat(log()).contains("The snapshot stream of DRA driver gpu.example.com works again after 2 failed"
        + " attempts");
    failAndRetry();
    assertThat(log().lines().filter(l -> l.contains(FAILED) && l.contains("WARN"))).hasSize(2);
  }
}
