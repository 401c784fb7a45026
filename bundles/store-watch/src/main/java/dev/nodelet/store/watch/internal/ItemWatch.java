package dev.nodelet.store.watch.internal;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.impl.BaseClient;
import java.io.ByteArrayOutputStream;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

/**
 * The HTTP watch of one object (a streaming GET with {@code watch=true}), closed for good by {@link #close()} at any
 * time, also before the API server has answered.
 *
 * <p>fabric8's HTTP watch returns before its request is answered, and its close then cancels a future derived from
 * the HTTP client's own: the answer that arrives afterwards is never read or closed, so the connection and the
 * server's watch stay open for good. Here the answer is awaited, never cancelled, and its body closed at once when the
 * watch is closed by then.
 *
 * <p>Events reach the watcher one at a time, in order, on the client's task executor (never on the HTTP client's
 * threads, which a watcher waiting for another answer would block); the next chunk of the body is asked for once the
 * last is handled. The first failure or end of the stream ends the watch with
 * {@link Watcher#onClose(WatcherException)} (410 Gone included), and a close by the owner reports nothing.
 */
final class ItemWatch<T extends HasMetadata> implements Watch {

  private final KubernetesClient client;
  private final Class<T> type;
  private final Watcher<T> watcher;
  private final Executor events;
  private final ByteArrayOutputStream line = new ByteArrayOutputStream();
  private AsyncBody body;
  private boolean closed;
  private boolean ended;

  private ItemWatch(KubernetesClient client, Class<T> type, Watcher<T> watcher) {
    this.client = client;
    this.type = type;
    this.watcher = watcher;
    this.events = client.adapt(BaseClient.class).getExecutor();
  }

  /**
   * Starts watching {@code namespace/name} of the core v1 resource {@code plural} from {@code resourceVersion}, with
   * bookmarks.
   */
  static <T extends HasMetadata> ItemWatch<T> start(KubernetesClient client, Class<T> type, String plural,
      String namespace, String name, String resourceVersion, Watcher<T> watcher) {
    ItemWatch<T> watch = new ItemWatch<>(client, type, watcher);
    String uri = client.getMasterUrl().toString().replaceAll("/+$", "") + "/api/v1/namespaces/" + encode(namespace)
        + "/" + plural + "?watch=true&allowWatchBookmarks=true&fieldSelector="
        + encode("metadata.name=" + name) + "&resourceVersion=" + encode(resourceVersion);
    HttpRequest request = client.getHttpClient().newHttpRequestBuilder().uri(uri).forStreaming().build();
    client.getHttpClient().consumeBytes(request, watch::received).whenComplete(watch::answered);
    return watch;
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  private void answered(HttpResponse<AsyncBody> response, Throwable error) {
    synchronized (this) {
      if (response != null) {
        body = response.body();
      }
      if (closed) {
        if (body != null) {
          body.cancel();
        }
        return;
      }
    }
    if (error != null) {
      end(new WatcherException(error.getMessage(), error));
    } else if (!response.isSuccessful()) {
      body.cancel();
      end(new WatcherException("watch refused with HTTP " + response.code(),
          new KubernetesClientException("watch refused", response.code(), null)));
    } else {
      body.done().whenComplete((done, failed) -> end(new WatcherException(
          failed == null ? "the API server ended the watch" : failed.getMessage(), failed)));
      body.consume();
    }
  }

  private void received(List<ByteBuffer> buffers, AsyncBody from) {
    List<String> lines = new ArrayList<>();
    for (ByteBuffer buffer : buffers) {
      while (buffer.hasRemaining()) {
        byte b = buffer.get();
        if (b == '\n') {
          lines.add(line.toString(StandardCharsets.UTF_8));
          line.reset();
        } else {
          line.write(b);
        }
      }
    }
    events.execute(() -> {
      for (String text : lines) {
        if (isOver()) {
          return;
        }
        if (!text.isBlank()) {
          event(text);
        }
      }
      from.consume();
    });
  }

  @SuppressWarnings("unchecked")
  private void event(String text) {
    if (isOver()) {
      return;
    }
    WatchEvent event;
    try {
      event = client.getKubernetesSerialization().unmarshal(text, WatchEvent.class);
    } catch (RuntimeException e) {
      end(new WatcherException("an unreadable watch event", e));
      return;
    }
    Object object = event.getObject();
    if (object instanceof Status status) {
      end(new WatcherException(status.getMessage(), new KubernetesClientException(status)));
      return;
    }
    Watcher.Action action;
    try {
      action = Watcher.Action.valueOf(event.getType());
    } catch (IllegalArgumentException | NullPointerException e) {
      end(new WatcherException("a watch event of unknown type " + event.getType()));
      return;
    }
    T resource = type.isInstance(object) ? (T) object : client.getKubernetesSerialization().convertValue(object, type);
    watcher.eventReceived(action, resource);
  }

  private synchronized boolean isOver() {
    return closed || ended;
  }

  /** Ends the watch for a reason other than the owner's close, and tells the watcher once. */
  private void end(WatcherException cause) {
    AsyncBody open;
    synchronized (this) {
      if (closed || ended) {
        return;
      }
      ended = true;
      open = body;
    }
    if (open != null) {
      open.cancel();
    }
    watcher.onClose(cause);
  }

  @Override
  public void close() {
    AsyncBody open;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      open = body;
    }
    if (open != null) {
      open.cancel();
    }
  }
}
