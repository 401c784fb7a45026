package dev.nodelet.dra.internal;

import dev.nodelet.dra.DraDriver;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SnapshotListener;
import dev.nodelet.dra.Subscription;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** A driver the test drives by hand: each call is one event of the current subscription's stream. */
final class TestDriver implements DraDriver {

  private final String name;
  private volatile SnapshotListener listener;
  private volatile List<Pool> onSubscribe;
  final AtomicInteger subscriptions = new AtomicInteger();
  final AtomicInteger closes = new AtomicInteger();

  private volatile boolean ownSlices;

  /** The driver says that it writes its own slices, as a kubelet DRA plugin does. */
  TestDriver publishingOwnSlices() {
    this.ownSlices = true;
    return this;
  }

  @Override
  public boolean publishesOwnSlices() {
    return ownSlices;
  }

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
