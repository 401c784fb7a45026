package dev.nodelet.dra.claims;

import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.DeviceHealthSource;
import dev.nodelet.dra.HealthListener;
import dev.nodelet.dra.PrepareResult;
import dev.nodelet.dra.Subscription;
import dev.nodelet.testing.dra.PreparingDriver;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** An in-process driver that prepares each claim with its allocated device, records every call and reports health. */
final class TestDriver extends PreparingDriver implements DeviceHealthSource {

  final List<String> calls = new CopyOnWriteArrayList<>();
  final AtomicInteger failPrepares = new AtomicInteger();
  volatile HealthListener healthListener;
  final AtomicInteger healthWatches = new AtomicInteger();

  TestDriver(String name) {
    super(name);
  }

  @Override
  public Map<String, PrepareResult> prepare(List<ClaimRef> claims) {
    claims.forEach(c -> calls.add("prepare " + c.name()));
    if (failPrepares.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      throw new IllegalStateException("device busy");
    }
    return super.prepare(claims);
  }

  @Override
  public Map<String, String> unprepare(List<ClaimRef> claims) {
    claims.forEach(c -> calls.add("unprepare " + c.name()));
    return super.unprepare(claims);
  }

  @Override
  public Subscription watchHealth(HealthListener listener) {
    healthWatches.incrementAndGet();
    healthListener = listener;
    return () -> healthListener = null;
  }

  void report(DeviceHealth health) {
    healthListener.onHealth(List.of(health));
  }
}
