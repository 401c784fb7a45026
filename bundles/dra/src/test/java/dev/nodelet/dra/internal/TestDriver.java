package dev.nodelet.dra.internal;

import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SelfPublishedSlices;
import dev.nodelet.dra.SnapshotListener;
import dev.nodelet.dra.Subscription;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A driver the test drives by hand: each call is one event of the current subscription's stream. Added with
 * {@code addSelfPublished}, it stands for a kubelet plugin that writes its own slices.
 */
final class TestDriver implements DeviceSnapshots, SelfPublishedSlices {

  private final String name;
  private volatile SnapshotListener listener;
  private volatile List<Pool> onSubscribe;
  final AtomicInteger subscriptions = new AtomicInteger();
  final AtomicInteger closes = new AtomicInteger();

  TestDriver(String name) {
    this.name = name;
  }

  /** Every later subscription starts with this snapshot, delivered inside subscribe. */
  TestDriver snapshotOnSubscribe(List<Pool> pools) {
    this.onSubscribe = pools;
    return this;
  }

  @Override
  public String driverName() {
    return name;
  }

  @Override
  public Subscription subscribe(SnapshotListener l) {
    subscriptions.incrementAndGet();
    listener = l;
    List<Pool> first = onSubscribe;
    if (first != null) {
      l.onSnapshot(first);
    }
    return closes::incrementAndGet;
  }

  void publish(List<Pool> pools) {
    listener.onSnapshot(pools);
  }

  void fail(Throwable cause, boolean retryable) {
    listener.onError(cause, retryable);
  }

  void complete() {
    listener.onCompleted();
  }

  @Override
  public String toString() {
    return "TestDriver[" + name + "]";
  }
}
