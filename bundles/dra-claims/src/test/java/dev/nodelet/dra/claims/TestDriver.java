package dev.nodelet.dra.claims;

import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.DraDriver;
import dev.nodelet.dra.HealthListener;
import dev.nodelet.dra.PrepareResult;
import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.SnapshotListener;
import dev.nodelet.dra.Subscription;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** An in-process driver that prepares each claim with one device and records every call. */
final class TestDriver implements DraDriver {

  final String name;
  final List<String> calls = new CopyOnWriteArrayList<>();
  final AtomicInteger failPrepares = new AtomicInteger();
  volatile HealthListener healthListener;

  TestDriver(String name) {
    this.name = name;
  }

  @Override
  public String driverName() {
    return name;
  }

  @Override
  public Subscription subscribe(SnapshotListener listener) {
    return () -> { };
  }

  @Override
  public boolean preparesClaims() {
    return true;
  }

  @Override
  public Map<String, PrepareResult> prepare(List<ClaimRef> claims) {
    claims.forEach(c -> calls.add("prepare " + c.name()));
    if (failPrepares.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      throw new IllegalStateException("device busy");
    }
    Map<String, PrepareResult> out = new HashMap<>();
    for (ClaimRef c : claims) {
      String device = c.name() + "-dev";
      out.put(c.uid(), PrepareResult.prepared(List.of(new PreparedDevice(List.of("req"), "pool", device,
          List.of("k8s." + name + "/device=" + device), null))));
    }
    return out;
  }

  @Override
  public Map<String, String> unprepare(List<ClaimRef> claims) {
    claims.forEach(c -> calls.add("unprepare " + c.name()));
    return Map.of();
  }

  @Override
  public Subscription watchHealth(HealthListener listener) {
    healthListener = listener;
    return () -> healthListener = null;
  }

  void report(DeviceHealth health) {
    healthListener.onHealth(List.of(health));
  }
}
