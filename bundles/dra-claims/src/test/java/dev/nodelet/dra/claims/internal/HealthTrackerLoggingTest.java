package dev.nodelet.dra.claims.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.controller.DrivableScheduler;
import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.DeviceHealthSource;
import dev.nodelet.dra.HealthListener;
import dev.nodelet.dra.Subscription;
import dev.nodelet.testing.dra.PreparingDriver;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a dead driver's failing health stream writes to the log (SLF4J's simple logger at INFO writes to whatever
 * {@code System.err} is at each line): one WARN line for the first failure, nothing above DEBUG for the attempts
 * that follow, and one line once the stream works again: the driver's {@link dev.nodelet.controller.StreamMonitor},
 * the same monitor the slice controller follows a driver's snapshots with.
 */
class HealthTrackerLoggingTest {

  private static final String DRIVER = "gpu.example.com";

  @TempDir
  Path dir;

  private final PrintStream original = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
  private final DrivableScheduler time = new DrivableScheduler();

  @BeforeEach
  void capture() {
    System.setErr(new PrintStream(new OutputStream() {
      @Override
      public void write(int b) {
        original.write(b);
        synchronized (captured) {
          captured.write(b);
        }
      }
    }, true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void restore() {
    System.setErr(original);
  }

  private List<String> lines(String containing) {
    synchronized (captured) {
      return Arrays.stream(captured.toString(StandardCharsets.UTF_8).split("\n"))
          .filter(line -> line.contains(containing))
          .map(line -> line.replaceFirst("^\\[[^]]*\\] ", "")) // the thread's name
          .toList();
    }
  }

  /** A driver whose health stream fails its first {@code failing} attempts, then reports. */
  private static final class FailingHealthDriver extends PreparingDriver implements DeviceHealthSource {
    final AtomicInteger attempts = new AtomicInteger();
    final int failing;
    final CountDownLatch reported = new CountDownLatch(1);

    FailingHealthDriver(int failing) {
      super(DRIVER);
      this.failing = failing;
    }

    @Override
    public Subscription watchHealth(HealthListener listener) {
      int attempt = attempts.incrementAndGet();
      if (attempt <= failing) {
        throw new IllegalStateException("connection refused (attempt " + attempt + ")");
      }
      listener.onHealth(List.of(new DeviceHealth("pool", "gpu-0", DeviceHealth.Health.HEALTHY, Instant.now(),
          Duration.ofSeconds(30), "")));
      reported.countDown();
      return () -> { };
    }
  }

  @Test
  void aFailingHealthStreamWarnsOnceThenSaysWhenItWorksAgain() throws Exception {
    FailingHealthDriver driver = new FailingHealthDriver(20);
    try (HealthTracker tracker = new HealthTracker(Clock.systemUTC(), time, Duration.ofMillis(1),
        new HealthState(dir), () -> { })) {
      tracker.follow(DRIVER, driver);
      for (int retry = 1; retry <= 20; retry++) {
        assertThat(time.pendingDelays()).as("retry " + retry + " waits").containsExactly(Duration.ofMillis(1));
        time.advance(Duration.ofMillis(1));
      }
      assertThat(driver.reported.getCount()).as("reported after 20 failures").isZero();
      assertThat(time.pending()).isZero();
      assertThat(driver.attempts).hasValue(21);
      assertThat(lines("The health stream of DRA driver " + DRIVER)).containsExactly(
          "WARN dev.nodelet.controller.StreamMonitor - The health stream of DRA driver gpu.example.com failed:"
              + " connection refused (attempt 1); subscribing again in 1 ms (further failures until it delivers"
              + " again are logged at DEBUG)",
          "INFO dev.nodelet.controller.StreamMonitor - The health stream of DRA driver"
              + " gpu.example.com works again after 20 failed attempts");
      assertThat(lines("\tat ")).as("no stack trace").isEmpty();
    }
  }
}
