package dev.nodelet.dra.grpc.internal;

import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SnapshotListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records what a subscription delivers. */
final class RecordingListener implements SnapshotListener {

  record Failure(Throwable cause, boolean retryable) {
  }

  final List<List<Pool>> snapshots = new CopyOnWriteArrayList<>();
  final List<Failure> failures = new CopyOnWriteArrayList<>();
  volatile boolean completed;

  @Override
  public void onSnapshot(List<Pool> pools) {
    snapshots.add(pools);
  }

  @Override
  public void onError(Throwable cause, boolean retryable) {
    failures.add(new Failure(cause, retryable));
  }

  @Override
  public void onCompleted() {
    completed = true;
  }
}
