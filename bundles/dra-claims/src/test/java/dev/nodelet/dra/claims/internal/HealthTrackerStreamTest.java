package dev.nodelet.dra.claims.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.controller.DrivableScheduler;
import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.DeviceHealthSource;
import dev.nodelet.dra.HealthListener;
import dev.nodelet.dra.Subscription;
import dev.nodelet.dra.claims.DeviceHealthInfo;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The health stream of each driver's newest registration, followed by its stream monitor on drivable time: a broken
 * stream keeps the health and is watched again after the retry delay, "Unimplemented" and a registration without a
 * health stream clear it, a superseded or closed stream reports nothing.
 */
class HealthTrackerStreamTest {

  private static final String GPU = "gpu.example.com";
  private static final Duration RETRY = Duration.ofSeconds(5);

  @TempDir
  Path dir;

  private final DrivableScheduler time = new DrivableScheduler();
  private final Clock clock = Clock.fixed(Instant.parse("2026-11-28T12:00:00Z"), ZoneOffset.UTC);
  private final AtomicInteger changes = new AtomicInteger();
  private HealthTracker tracker;

  /** A registration of the driver; {@code withHealth = false} stands for one without a health stream. */
  private static final class Registration implements DeviceHealthSource {
    final boolean withHealth;
    final List<HealthListener> listeners = new ArrayList<>();
    final AtomicInteger closes = new AtomicInteger();

    Registration(boolean withHealth) {
      this.withHealth = withHealth;
    }

    @Override
    public String driverName() {
      return GPU;
    }

    @Override
    public Subscription watchHealth(HealthListener listener) {
      if (!withHealth) {
        return null;
      }
      listeners.add(listener);
      return closes::incrementAndGet;
    }

    HealthListener last() {
      return listeners.get(listeners.size() - 1);
    }
  }

  private HealthTracker tracker() {
    tracker = new HealthTracker(clock, time, RETRY, new HealthState(dir), changes::incrementAndGet);
    return tracker;
  }

  @AfterEach
  void close() {
    if (tracker != null) {
      tracker.close();
    }
  }

  private static List<DeviceHealth> healthy(String device) {
    return List.of(new DeviceHealth("pool", device, DeviceHealth.Health.HEALTHY, Instant.EPOCH,
        Duration.ofMinutes(5), ""));
  }

  private List<String> devices() {
    return tracker.health().stream().map(DeviceHealthInfo::device).toList();
  }

  @Test
  void aBrokenStreamKeepsTheHealthAndIsWatchedAgainAfterTheRetryDelayWithoutTheOldStreamsReports() {
    HealthTracker health = tracker();
    Registration gpu = new Registration(true);
    health.follow(GPU, gpu);
    HealthListener first = gpu.last();
    first.onHealth(healthy("gpu-0"));
    first.onError(new IllegalStateException("EOF"), true);
    assertThat(devices()).as("kept").containsExactly("gpu-0");
    assertThat(time.pendingDelays()).containsExactly(RETRY);
    assertThat(gpu.closes).as("the broken stream is closed").hasValue(1);

    time.advance(RETRY);
    assertThat(gpu.listeners).hasSize(2);
    first.onHealth(healthy("late-0"));
    gpu.last().onHealth(healthy("gpu-1"));
    assertThat(devices()).containsExactly("gpu-0", "gpu-1");
  }

  @Test
  void unimplementedClearsTheHealthAndIsNotRetried() {
    HealthTracker health = tracker();
    Registration gpu = new Registration(true);
    health.follow(GPU, gpu);
    gpu.last().onHealth(healthy("gpu-0"));
    int before = changes.get();
    gpu.last().onError(new UnsupportedOperationException("Unimplemented"), false);
    assertThat(devices()).isEmpty();
    assertThat(changes.get()).isGreaterThan(before);
    assertThat(time.pending()).isZero();
    assertThat(gpu.listeners).hasSize(1);
  }

  @Test
  void aNewerRegistrationWithoutHealthClearsTheOlderOnesHealthAndEndsItsStream() {
    HealthTracker health = tracker();
    Registration older = new Registration(true);
    health.follow(GPU, older);
    older.last().onHealth(healthy("gpu-0"));

    health.follow(GPU, new Registration(false));
    assertThat(devices()).isEmpty();
    assertThat(older.closes).hasValue(1);
    older.last().onHealth(healthy("gpu-0"));
    older.last().onError(new IllegalStateException("EOF"), true);
    assertThat(devices()).as("a superseded stream reports nothing").isEmpty();
    assertThat(time.pending()).isZero();
  }

  @Test
  void closingLeavesNoStreamAndNoRetry() {
    HealthTracker health = tracker();
    Registration gpu = new Registration(true);
    Registration nic = new Registration(true);
    health.follow(GPU, gpu);
    health.follow("nic.example.com", nic);
    gpu.last().onError(new IllegalStateException("EOF"), true);
    assertThat(time.pending()).isOne();

    health.close();
    assertThat(time.pending()).isZero();
    assertThat(nic.closes).hasValue(1);
    nic.last().onHealth(healthy("nic-0"));
    assertThat(health.health()).isEmpty();
  }
}
