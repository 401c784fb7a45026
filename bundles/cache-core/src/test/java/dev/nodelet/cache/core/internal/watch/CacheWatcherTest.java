package dev.nodelet.cache.core.internal.watch;

import static dev.nodelet.cache.core.internal.watch.Fixtures.added;
import static dev.nodelet.cache.core.internal.watch.Fixtures.configMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.objectcache.WatchEvent;
import dev.nodelet.objectcache.WatchEvent.Type;
import dev.nodelet.cache.core.internal.watch.Fixtures.RecordingOwner;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** The watch fan-out rules of docs/kubernetes-rules.md on one watcher, without a hub. */
class CacheWatcherTest {

  private static final Duration NO_WAIT = Duration.ZERO;
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

  private final RecordingOwner owner = new RecordingOwner();

  private CacheWatcher<ConfigMap> watcher(int capacity, long start, long bookmarkAfter) {
    return watcher(capacity, start, bookmarkAfter, null, c -> true);
  }

  private CacheWatcher<ConfigMap> watcher(int capacity, long start, long bookmarkAfter, Instant deadline,
      Predicate<ConfigMap> filter) {
    return new CacheWatcher<>("configmaps#test", capacity, filter, WatchObjects.CONFIG_MAPS, owner, deadline, true,
        List.of(), start, bookmarkAfter);
  }

  /** A watcher of capacity one that holds event 1 in its result and event 2 in its input: no room left. */
  private CacheWatcher<ConfigMap> fullWatcher() {
    CacheWatcher<ConfigMap> watcher = watcher(1, 0, 0);
    watcher.add(added("a", 1));
    watcher.add(added("a", 2));
    return watcher;
  }

  private static List<WatchEvent<ConfigMap>> drain(CacheWatcher<ConfigMap> watcher) throws InterruptedException {
    List<WatchEvent<ConfigMap>> events = new ArrayList<>();
    WatchEvent<ConfigMap> event;
    while ((event = watcher.poll(NO_WAIT)) != null) {
      events.add(event);
    }
    return events;
  }

  private static List<String> versions(List<WatchEvent<ConfigMap>> events) {
    return events.stream().map(e -> e.type() + "@" + e.resourceVersion()).toList();
  }

  @Test
  void rule5_1_inputAndResultBuffersOfTheSameSizeThenDoneEndsDelivery() throws InterruptedException {
    CacheWatcher<ConfigMap> watcher = watcher(2, 0, 0);

    // two fill the result, two the input, the fifth finds no room
    for (int rv = 1; rv <= 4; rv++) {
      assertThat(watcher.nonblockingAdd(added("a", rv))).as("event %d", rv).isTrue();
    }
    assertThat(watcher.nonblockingAdd(added("a", 5))).isFalse();

    watcher.stop(false);

    // done: what reached the result is still delivered, the input never is
    assertThat(versions(drain(watcher))).containsExactly("ADDED@1", "ADDED@2");
    assertThat(watcher.isEnded()).isTrue();
  }

  @Test
  void rule5_2_bookmarkStateWaitingReceivedSent() throws InterruptedException {
    assertThat(watcher(1, 5, 0).state()).as("nothing awaited").isEqualTo(BookmarkState.SENT);

    CacheWatcher<ConfigMap> watcher = watcher(1, 5, 5);
    assertThat(watcher.state()).isEqualTo(BookmarkState.WAITING);

    assertThat(watcher.nonblockingAdd(added("a", 6))).isTrue(); // fills the result
    assertThat(watcher.nonblockingAdd(Change.bookmark(6))).isTrue();
    assertThat(watcher.state()).as("in the input").isEqualTo(BookmarkState.RECEIVED);

    assertThat(watcher.poll(NO_WAIT).type()).isEqualTo(Type.ADDED);
    assertThat(watcher.state()).as("moved to the result").isEqualTo(BookmarkState.SENT);
    assertThat(watcher.poll(NO_WAIT).isInitialEventsEnd()).isTrue();
  }

  @Test
  void rule5_3_nonblockingAddDropsBookmarksBelowTheAwaitedVersion() throws InterruptedException {
    CacheWatcher<ConfigMap> watcher = watcher(4, 5, 8);

    assertThat(watcher.nonblockingAdd(Change.bookmark(7))).isFalse();

    assertThat(watcher.state()).isEqualTo(BookmarkState.WAITING);
    assertThat(watcher.poll(NO_WAIT)).isNull();
  }

  @Test
  void rule5_3_addWithoutTimerClosesAFullWatcherAtOnce() throws InterruptedException {
    CacheWatcher<ConfigMap> watcher = fullWatcher();

    assertThat(watcher.add(added("a", 3))).isFalse();

    assertThat(owner.unresponsive).isEqualTo(1);
    assertThat(owner.forgotten).containsExactly(false);
    assertThat(versions(drain(watcher))).containsExactly("ADDED@1");
    assertThat(watcher.isEnded()).isTrue();
  }

  @Test
  void rule5_3_addWithTimerWaitsForRoom() throws InterruptedException {
    CacheWatcher<ConfigMap> watcher = fullWatcher();

    CompletableFuture<Boolean> blocked = CompletableFuture.supplyAsync(
        () -> watcher.add(added("a", 3), System.nanoTime() + Duration.ofSeconds(30).toNanos()));
    assertThat(watcher.poll(Duration.ofSeconds(5)).resourceVersion()).isEqualTo("1");

    assertThat(blocked.join()).isTrue();
    assertThat(owner.forgotten).isEmpty();
    assertThat(versions(drain(watcher))).containsExactly("ADDED@2", "ADDED@3");
  }

  @Test
  void rule5_3_whenTheTimerFiresTheWatcherIsClosedHardWhileWaitingForTheBookmark() throws InterruptedException {
    CacheWatcher<ConfigMap> watcher = watcher(1, 5, 9);
    watcher.add(added("a", 6));
    watcher.add(added("a", 7));

    assertThat(watcher.add(added("a", 8), System.nanoTime())).isFalse();

    assertThat(owner.unresponsive).isEqualTo(1);
    assertThat(owner.forgotten).containsExactly(false);
    assertThat(versions(drain(watcher))).containsExactly("ADDED@6");
  }

  @Test
  void rule5_3_closingIsGracefulWhenTheAwaitedBookmarkWasReceived() throws InterruptedException {
    CacheWatcher<ConfigMap> watcher = watcher(2, 5, 5);
    watcher.add(added("a", 6));
    watcher.add(added("a", 7));
    watcher.add(added("a", 8));
    assertThat(watcher.nonblockingAdd(Change.bookmark(8))).isTrue();

    assertThat(watcher.add(added("a", 9), System.nanoTime())).isFalse();

    assertThat(owner.forgotten).containsExactly(true);
    List<WatchEvent<ConfigMap>> events = drain(watcher);
    assertThat(versions(events)).containsExactly("ADDED@6", "ADDED@7", "ADDED@8", "BOOKMARK@8");
    assertThat(events.get(3).isInitialEventsEnd()).isTrue();
    assertThat(watcher.isEnded()).isTrue();
  }

  @Test
  void rule5_5_firstStopWithDrainKeepsDeliveringTheInput() throws InterruptedException {
    CacheWatcher<ConfigMap> watcher = fullWatcher();

    watcher.stop(true);

    assertThat(watcher.nonblockingAdd(added("a", 3))).as("input closed").isFalse();
    assertThat(versions(drain(watcher))).containsExactly("ADDED@1", "ADDED@2");
    assertThat(watcher.isEnded()).isTrue();
  }

  @Test
  void rule5_5_laterStopWithoutDrainEndsDeliveryAndStopIsIdempotent() throws InterruptedException {
    CacheWatcher<ConfigMap> watcher = fullWatcher();
    watcher.stop(true);

    watcher.stop(false);
    watcher.stop(false);

    // the result keeps what it had; the input is no longer drained
    assertThat(versions(drain(watcher))).containsExactly("ADDED@1");
    assertThat(watcher.isEnded()).isTrue();
    watcher.close();
    assertThat(owner.forgotten).containsExactly(false);
  }

  @Test
  void rule5_6_nextBookmarkTime() {
    CacheWatcher<ConfigMap> waiting = watcher(1, 5, 9, NOW.plusSeconds(30), c -> true);
    assertThat(waiting.nextBookmarkTime(NOW, Duration.ofMinutes(1))).as("waiting: at once").contains(NOW);

    CacheWatcher<ConfigMap> noDeadline = watcher(1, 5, 0);
    assertThat(noDeadline.nextBookmarkTime(NOW, Duration.ofMinutes(1))).contains(NOW.plusSeconds(60));

    CacheWatcher<ConfigMap> farDeadline = watcher(1, 5, 0, NOW.plusSeconds(3600), c -> true);
    assertThat(farDeadline.nextBookmarkTime(NOW, Duration.ofMinutes(1))).contains(NOW.plusSeconds(60));

    CacheWatcher<ConfigMap> nearDeadline = watcher(1, 5, 0, NOW.plusSeconds(30), c -> true);
    assertThat(nearDeadline.nextBookmarkTime(NOW, Duration.ofMinutes(1))).as("2 s before the deadline")
        .contains(NOW.plusSeconds(28));

    CacheWatcher<ConfigMap> pastPreTimeout = watcher(1, 5, 0, NOW.plusSeconds(1), c -> true);
    assertThat(pastPreTimeout.nextBookmarkTime(NOW, Duration.ofMinutes(1))).isEmpty();
  }

  @Test
  void rule5_7_eventTypeFollowsTheFilterOnPreviousAndCurrentObject() {
    CacheWatcher<ConfigMap> watcher = watcher(1, 0, 0, null,
        c -> "x".equals(c.getMetadata().getLabels().get("app")));
    ConfigMap in = configMap("a", 1, Map.of("app", "x"));
    ConfigMap out = configMap("a", 2, Map.of("app", "y"));

    assertThat(watcher.convert(new Change<>(Type.MODIFIED, out, in, 3)).type()).isEqualTo(Type.ADDED);
    assertThat(watcher.convert(new Change<>(Type.MODIFIED, in, in, 3)).type()).isEqualTo(Type.MODIFIED);
    assertThat(watcher.convert(new Change<>(Type.MODIFIED, out, out, 3))).isNull();
    assertThat(watcher.convert(new Change<>(Type.ADDED, null, out, 3))).isNull();

    WatchEvent<ConfigMap> left = watcher.convert(new Change<>(Type.MODIFIED, in, out, 3));
    assertThat(left.type()).isEqualTo(Type.DELETED);
    assertThat(left.object().getMetadata().getLabels()).as("the previous object").containsEntry("app", "x");
    assertThat(left.object().getMetadata().getResourceVersion()).as("the event's version").isEqualTo("3");
    assertThat(in.getMetadata().getResourceVersion()).as("the cached object is untouched").isEqualTo("1");

    WatchEvent<ConfigMap> deleted = watcher.convert(new Change<>(Type.DELETED, in, null, 4));
    assertThat(deleted.type()).isEqualTo(Type.DELETED);
    assertThat(deleted.resourceVersion()).isEqualTo("4");
  }

  @Test
  void rule5_7_onlyABookmarkBeforeTheSentStateCarriesTheInitialEventsEndAnnotation() throws InterruptedException {
    CacheWatcher<ConfigMap> watcher = watcher(4, 5, 5);

    watcher.nonblockingAdd(Change.bookmark(5));
    watcher.nonblockingAdd(Change.bookmark(6));

    WatchEvent<ConfigMap> first = watcher.poll(NO_WAIT);
    WatchEvent<ConfigMap> second = watcher.poll(NO_WAIT);
    assertThat(first.isInitialEventsEnd()).isTrue();
    assertThat(first.object().getMetadata().getAnnotations())
        .containsEntry(WatchEvent.INITIAL_EVENTS_END_ANNOTATION, "true");
    assertThat(second.type()).isEqualTo(Type.BOOKMARK);
    assertThat(second.isInitialEventsEnd()).isFalse();
    assertThat(second.object().getMetadata().getResourceVersion()).isEqualTo("6");
  }

  @Test
  void aLingeringConsumerTakesABatchAndIsSignalledOnceTheResultIsHalfFull() throws InterruptedException {
    // a linger of an hour: only a signal can bring the consumer back within the test's time
    CacheWatcher<ConfigMap> watcher = new CacheWatcher<>("configmaps#test", 4, c -> true, WatchObjects.CONFIG_MAPS,
        owner, null, false, List.of(), 0, 0, Duration.ofHours(1));
    List<String> received = new CopyOnWriteArrayList<>();
    Thread consumer = new Thread(() -> watcher.forEach(e -> received.add(e.type() + "@" + e.resourceVersion())));
    consumer.start();

    // the first wait asks for a signal (an untimed wait); having got an event from it, the consumer then lingers
    await().atMost(Duration.ofSeconds(20)).until(() -> consumer.getState() == Thread.State.WAITING);
    watcher.add(added("a", 1));
    await().atMost(Duration.ofSeconds(20)).until(() -> received.size() == 1);
    await().atMost(Duration.ofSeconds(20)).until(() -> consumer.getState() == Thread.State.TIMED_WAITING);

    watcher.add(added("a", 2)); // a quarter of the result: no signal
    watcher.add(added("a", 3)); // half of it: signalled, takes both
    await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
        assertThat(received).containsExactly("ADDED@1", "ADDED@2", "ADDED@3"));

    // a lingering consumer sees the end at once
    await().atMost(Duration.ofSeconds(20)).until(() -> consumer.getState() == Thread.State.TIMED_WAITING);
    watcher.stop(false);
    consumer.join(Duration.ofSeconds(20).toMillis());
    assertThat(consumer.isAlive()).isFalse();
    assertThat(watcher.isEnded()).isTrue();
  }

  @Test
  void aConsumerBehindTakesWithoutWaitingAndMovesTheInputAsItTakes() throws InterruptedException {
    CacheWatcher<ConfigMap> watcher = watcher(2, 0, 0);
    for (int rv = 1; rv <= 4; rv++) {
      watcher.add(added("a", rv));
    }

    assertThat(watcher.poll(NO_WAIT).resourceVersion()).isEqualTo("1");
    // the take made room: the input moved up, so the input has room for one more, not two
    assertThat(watcher.nonblockingAdd(added("a", 5))).isTrue();
    assertThat(watcher.nonblockingAdd(added("a", 6))).isFalse();
    assertThat(versions(drain(watcher))).containsExactly("ADDED@2", "ADDED@3", "ADDED@4", "ADDED@5");
  }

  @Test
  void closeDiscardsWhatWasNotTakenAndEndsTheIterator() throws InterruptedException {
    CacheWatcher<ConfigMap> watcher = watcher(4, 0, 0);
    watcher.add(added("a", 1));
    watcher.add(added("a", 2));
    assertThat(watcher.poll(NO_WAIT).resourceVersion()).isEqualTo("1");

    watcher.close();

    assertThat(watcher.isEnded()).isTrue();
    assertThat(watcher.poll(NO_WAIT)).isNull();
    assertThat(watcher.iterator().hasNext()).isFalse();
  }

  @Test
  void toStringNamesTheObjectButNotItsData() throws InterruptedException {
    CacheWatcher<ConfigMap> watcher = watcher(1, 0, 0);
    watcher.add(added("a", 1));

    assertThat(watcher.poll(NO_WAIT).toString()).isEqualTo("ADDED ConfigMap ns/a at 1").doesNotContain("value");
  }
}
