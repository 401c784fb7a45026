package dev.nodelet.pods.internal;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet's event recorder for the pods of this node: core/v1 Events in the pod's namespace, {@code source}
 * {@code nodelet} on this node, and the kubelet's aggregation (the same event again patches {@code count} and
 * {@code lastTimestamp} of the one already written). Writes go through a queue on a thread of their own, never on
 * the pods' work thread; a full queue or a failed write drops the event, logging once until a write succeeds again.
 * Messages never hold the content of a Secret (they name objects and keys only).
 */
class PodEvents implements AutoCloseable {

  static final String COMPONENT = "nodelet";
  private static final Logger LOG = LoggerFactory.getLogger(PodEvents.class);
  private static final int CACHE_SIZE = 4096; // as the kubelet's event correlator's cache

  /** Records nothing (a runtime without an API server to write to). */
  static final PodEvents NONE = new PodEvents();

  private final KubernetesClient client;
  private final String node;
  private final Clock clock;
  private final ThreadPoolExecutor writer;
  private final AtomicBoolean failing = new AtomicBoolean();
  private final java.util.concurrent.atomic.AtomicLong lastSuffix = new java.util.concurrent.atomic.AtomicLong();
  // writer thread only: the events written, by what makes two of them the same, for aggregation
  private final Map<String, Written> written = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Written> eldest) {
      return size() > CACHE_SIZE;
    }
  };

  private record Written(String name, int count) {
  }

  private PodEvents() {
    this.client = null;
    this.node = null;
    this.clock = null;
    this.writer = null;
  }

  PodEvents(KubernetesClient client, String node, Clock clock) {
    this.client = client;
    this.node = node;
    this.clock = clock;
    this.writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1000), r -> {
      Thread thread = new Thread(r, "nodelet-pod-events");
      thread.setDaemon(true);
      return thread;
    }, (r, executor) -> dropped("the queue is full", null));
  }

  /** A {@code Normal} event about a container of the pod (null: the pod itself). */
  void normal(Pod pod, String container, String reason, String message) {
    record(pod, container, "Normal", reason, message);
  }

  /** A {@code Warning} event about a container of the pod (null: the pod itself). */
  void warning(Pod pod, String container, String reason, String message) {
    record(pod, container, "Warning", reason, message);
  }

  private void record(Pod pod, String container, String type, String reason, String message) {
    if (writer == null || writer.isShutdown() || pod == null || pod.getMetadata() == null) {
      return;
    }
    Instant now = clock.instant();
    String time = Times.format(now);
    var involved = new io.fabric8.kubernetes.api.model.ObjectReferenceBuilder().withApiVersion("v1")
        .withKind("Pod").withNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
        .withUid(pod.getMetadata().getUid()).withResourceVersion(pod.getMetadata().getResourceVersion())
        .withFieldPath(container == null ? null : "spec.containers{" + container + "}").build();
    Event event = new EventBuilder().withNewMetadata()
        .withName(pod.getMetadata().getName() + "." + Long.toHexString(suffix(now)))
        .withNamespace(pod.getMetadata().getNamespace()).endMetadata()
        .withInvolvedObject(involved).withType(type).withReason(reason).withMessage(message)
        .withNewSource().withComponent(COMPONENT).withHost(node).endSource()
        .withReportingComponent(COMPONENT).withReportingInstance(node)
        .withFirstTimestamp(time).withLastTimestamp(time).withCount(1).build();
    String key = String.join("\u0000", involved.getNamespace(), String.valueOf(involved.getUid()),
        String.valueOf(involved.getFieldPath()), type, reason, message);
    writer.execute(() -> write(key, event));
  }

  /** The kubelet's name suffix, the time in nanoseconds; one more than the last when the clock did not move. */
  private long suffix(Instant now) {
    long nanos = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    return lastSuffix.accumulateAndGet(nanos, (last, next) -> Math.max(last + 1, next));
  }

  private void write(String key, Event event) {
    String namespace = event.getMetadata().getNamespace();
    Written before = written.get(key);
    try {
      if (before != null) {
        int count = before.count() + 1;
        client.v1().events().inNamespace(namespace).withName(before.name())
            .patch(PatchContext.of(PatchType.STRATEGIC_MERGE), "{\"count\":" + count + ",\"lastTimestamp\":\""
                + event.getLastTimestamp() + "\"}");
        written.put(key, new Written(before.name(), count));
      } else {
        client.v1().events().inNamespace(namespace).resource(event).create();
        written.put(key, new Written(event.getMetadata().getName(), 1));
      }
      if (failing.compareAndSet(true, false)) {
        LOG.info("Events are written again");
      }
    } catch (RuntimeException e) {
      if (before != null) {
        written.remove(key); // gone (expired, say): the next one is written anew
      }
      dropped("writing it failed", e);
    }
  }

  private void dropped(String why, RuntimeException e) {
    if (writer.isShutdown()) {
      return; // closing: what was under way is cut short, not a failure to report
    }
    if (failing.compareAndSet(false, true)) {
      LOG.warn("An event was dropped ({}{}); further drops are not logged until a write succeeds", why,
          e == null ? "" : ": " + e.getMessage());
    }
  }

  /** Drops what is still queued and ends the thread. */
  @Override
  public void close() {
    if (writer != null) {
      writer.shutdownNow();
      try {
        writer.awaitTermination(5, TimeUnit.SECONDS); // a write under way ends at the client's timeout at most
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
