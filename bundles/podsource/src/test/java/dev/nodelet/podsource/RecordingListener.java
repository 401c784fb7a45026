package dev.nodelet.podsource;

import dev.nodelet.objectcache.PodListener;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Records calls as "register ns/name v=<label v>" or "unregister ns/name"; can block or fail on demand. */
public final class RecordingListener implements PodListener {

  private final List<String> calls = new ArrayList<>();
  private volatile CountDownLatch gate = new CountDownLatch(0);
  private volatile boolean failing;

  public void block() {
    gate = new CountDownLatch(1);
  }

  public void unblock() {
    gate.countDown();
  }

  public void fail() {
    failing = true;
  }

  public synchronized List<String> calls() {
    return List.copyOf(calls);
  }

  @Override
  public void registerPod(Pod pod) {
    record("register " + pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName() + " v="
        + pod.getMetadata().getLabels().get("v"));
  }

  @Override
  public void unregisterPod(Pod pod) {
    record("unregister " + pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName());
  }

  private void record(String call) {
    try {
      if (!gate.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("never unblocked");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    synchronized (this) {
      calls.add(call);
    }
    if (failing) {
      throw new IllegalStateException("listener failure");
    }
  }
}
