package dev.nodelet.testing.apiserver;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/** A watcher that keeps what it received, as "ACTION name" lines and the objects. */
final class Recorder<T extends HasMetadata> implements Watcher<T> {

  record Received<T extends HasMetadata>(Action action, T object) {
    String line() {
      return action + " " + object.getMetadata().getName();
    }
  }

  final List<Received<T>> events = new CopyOnWriteArrayList<>();
  final AtomicReference<WatcherException> closedWith = new AtomicReference<>();
  volatile boolean closed;

  @Override
  public void eventReceived(Action action, T resource) {
    events.add(new Received<>(action, resource));
  }

  @Override
  public void onClose(WatcherException cause) {
    closedWith.set(cause);
    closed = true;
  }

  @Override
  public void onClose() {
    closed = true;
  }

  /** "ACTION name" for every event but bookmarks. */
  List<String> lines() {
    return events.stream().filter(e -> e.action() != Action.BOOKMARK).map(Received::line)
        .collect(Collectors.toList());
  }

  List<Received<T>> bookmarks() {
    return events.stream().filter(e -> e.action() == Action.BOOKMARK).collect(Collectors.toList());
  }

  void awaitLines(int count) {
    await().atMost(Duration.ofSeconds(30)).until(() -> lines().size() >= count);
  }
}
