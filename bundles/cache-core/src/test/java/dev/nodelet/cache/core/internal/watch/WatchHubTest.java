package dev.nodelet.cache.core.internal.watch;

import static dev.nodelet.cache.core.internal.watch.Fixtures.configMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchEvent;
import dev.nodelet.objectcache.WatchExpiredException;
import dev.nodelet.objectcache.WatchOptions;
import dev.nodelet.objectcache.testing.MutableClock;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The watch fan-out rules of docs/kubernetes-rules.md (time budget, bookmarks, initial events) through the hub, with a hand-moved clock and explicit timer ticks. */
class WatchHubTest {

  private static final Duration NO_WAIT = Duration.ZERO;

  private final MutableClock clock = new MutableClock();
  private final WatchHub<ConfigMap> hub = new WatchHub<>("configmaps", WatchObjects.CONFIG_MAPS, clock,
      WatchHubSettings.DEFAULTS.withTickPeriod(Duration.ZERO));
  private final ExecutorService consumers = Executors.newCachedThreadPool();

  @AfterEach
  void tearDown() throws InterruptedException {
    hub.close();
    consumers.shutdownNow();
    assertThat(consumers.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
  }

  private static WatchOptions.Builder<ConfigMap> options() {
    return WatchOptions.builder();
  }

  private static List<String> drain(Watch<ConfigMap> watch) throws InterruptedException {
    List<String> events = new ArrayList<>();
    WatchEvent<ConfigMap> event;
    while ((event = watch.poll(NO_WAIT)) != null) {
      events.add(describe(event));
    }
    return events;
  }

  private static String describe(WatchEvent<ConfigMap> event) {
    String name = event.type() == WatchEvent.Type.BOOKMARK ? (event.isInitialEventsEnd() ? "end" : "-")
        : event.object().getMetadata().getName();
    return event.type() + " " + name + "@" + event.resourceVersion();
  }

  @Test
  void rule5_4_oneStalledConsumerDelaysTheOthersAtMostTheBudgetAndIsClosed() throws InterruptedException {
    clock.advance(Duration.ofSeconds(10)); // a full budget of 100 ms
    List<List<String>> received = List.of(new CopyOnWriteArrayList<>(), new CopyOnWriteArrayList<>());
    List<CompletableFuture<Void>> loops = new ArrayList<>();
    for (List<String> events : received) {
      loops.add(hub.watch(options().bufferSize(1000).build())
          .forEachAsync(consumers, event -> events.add(describe(event))));
    }
    Watch<ConfigMap> stalled = hub.watch(options().bufferSize(1).build());

    for (int rv = 10; rv < 60; rv++) {
      hub.put(configMap("a", rv));
    }

    // the clock stood still, so the budget never refilled: one wait within the 100 ms budget, then no more waiting
    assertThat(hub.dispatchWaits()).isEqualTo(1);
    assertThat(hub.terminatedWatchers()).isEqualTo(1);
    assertThat(hub.watcherCount()).isEqualTo(2);
    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
      assertThat(received.get(0)).hasSize(50).endsWith("MODIFIED a@59");
      assertThat(received.get(1)).hasSize(50).endsWith("MODIFIED a@59");
    });
    assertThat(stalled.isEnded()).isFalse();
    assertThat(stalled.poll(NO_WAIT)).extracting(WatchEvent::resourceVersion).isEqualTo("10");
    assertThat(stalled.isEnded()).as("closed after what was in its result").isTrue();
    hub.close();
    CompletableFuture.allOf(loops.toArray(CompletableFuture[]::new)).orTimeout(30, TimeUnit.SECONDS).join();
  }

  @Test
  void rule5_4_onceTheBudgetIsSpentFullWatchersAreClosedAtOnce() throws InterruptedException {
    clock.advance(Duration.ofSeconds(10)); // a full budget of 100 ms
    List<Watch<ConfigMap>> stalled = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      stalled.add(hub.watch(options().bufferSize(1).build()));
    }
    Watch<ConfigMap> consumed = hub.watch(options().bufferSize(10).build());
    hub.put(configMap("a", 10)); // fills every result
    hub.put(configMap("a", 11)); // fills every input

    long start = System.nanoTime();
    hub.put(configMap("a", 12));
    Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

    // the first full watcher used the whole budget (a real wait, so at least 100 ms); the others did not wait
    assertThat(elapsed).isGreaterThanOrEqualTo(Duration.ofMillis(100));
    assertThat(hub.dispatchWaits()).isEqualTo(1);
    assertThat(hub.terminatedWatchers()).isEqualTo(5);
    assertThat(hub.watcherCount()).isEqualTo(1);
    for (Watch<ConfigMap> watch : stalled) {
      assertThat(drain(watch)).containsExactly("ADDED a@10");
      assertThat(watch.isEnded()).isTrue();
    }
    assertThat(drain(consumed)).containsExactly("ADDED a@10", "MODIFIED a@11", "MODIFIED a@12");
  }

  @Test
  void queuedEventsCountTheResultAndTheInputOfEveryWatch() throws InterruptedException {
    assertThat(hub.queuedEvents().getCount()).isZero();
    Watch<ConfigMap> small = hub.watch(options().bufferSize(2).build());
    Watch<ConfigMap> large = hub.watch(options().bufferSize(10).build());
    for (int rv = 10; rv < 14; rv++) {
      hub.put(configMap("a", rv));
    }
    // the small watch holds two in its result and two in its input, the large one four in its result
    assertThat(hub.queuedEvents().getSum()).isEqualTo(8);
    assertThat(hub.queuedEvents().getMax()).isEqualTo(4);

    assertThat(drain(large)).hasSize(4);
    assertThat(small.poll(NO_WAIT)).isNotNull();
    assertThat(hub.queuedEvents().getSum()).isEqualTo(3);
    assertThat(hub.queuedEvents().getMax()).isEqualTo(3);

    small.close();
    assertThat(hub.queuedEvents().getCount()).isEqualTo(1);
    assertThat(hub.queuedEvents().getSum()).isZero();
  }

  @Test
  void rule5_3_gracefulCloseDeliversThePendingBookmark() throws InterruptedException {
    hub.put(configMap("a", 10));
    Watch<ConfigMap> watch = hub.watch(options().sendInitialEvents(true).allowBookmarks(true).bufferSize(1)
        .build());
    hub.put(configMap("a", 11)); // into the input; the result holds the initial event
    hub.tick(); // the bookmark finds the input full: dropped, still waiting
    assertThat(drain(watch)).containsExactly("ADDED a@10", "MODIFIED a@11");
    hub.put(configMap("a", 12)); // fills the result again
    hub.tick(); // the awaited bookmark is received into the input
    hub.put(configMap("a", 13)); // no room, no budget: closed, gracefully

    assertThat(hub.terminatedWatchers()).isEqualTo(1);
    assertThat(drain(watch)).containsExactly("MODIFIED a@12", "BOOKMARK end@12");
    assertThat(watch.isEnded()).isTrue();
  }

  @Test
  void rule5_6_bookmarksEveryMinuteAndTwoSecondsBeforeTheDeadline() throws InterruptedException {
    hub.put(configMap("a", 10));
    Watch<ConfigMap> watch = hub.watch(options().allowBookmarks(true).deadline(clock.instant().plusSeconds(90))
        .build());
    hub.put(configMap("a", 11));
    drain(watch);

    hub.tick();
    assertThat(drain(watch)).as("not due yet").isEmpty();

    clock.advance(Duration.ofSeconds(60));
    hub.tick();
    assertThat(drain(watch)).containsExactly("BOOKMARK -@11");

    clock.advance(Duration.ofSeconds(27));
    hub.tick();
    assertThat(drain(watch)).as("next is 2 s before the deadline").isEmpty();
    clock.advance(Duration.ofSeconds(1));
    hub.tick();
    assertThat(drain(watch)).containsExactly("BOOKMARK -@11");

    clock.advance(Duration.ofSeconds(2));
    hub.tick();
    assertThat(watch.isEnded()).as("the deadline ends the watch").isTrue();
  }

  @Test
  void rule5_6_everyTickWhileWaitingForTheAwaitedBookmark() throws InterruptedException {
    hub.put(configMap("a", 10));
    Watch<ConfigMap> watch = hub.watch(options().resourceVersion("12").sendInitialEvents(true)
        .allowBookmarks(true).build());
    assertThat(drain(watch)).containsExactly("ADDED a@10");

    hub.tick();
    hub.progress("11");
    hub.tick();
    assertThat(drain(watch)).as("bookmarks below 12 are dropped").isEmpty();

    hub.progress("12");
    hub.tick();
    assertThat(drain(watch)).as("the very next tick, without moving the clock").containsExactly("BOOKMARK end@12");
  }

  @Test
  void rule5_7_addedModifiedDeletedFromTheFilterOnPreviousAndCurrent() throws InterruptedException {
    Watch<ConfigMap> watch = hub.watch(options().label("app", "x").build());

    hub.put(configMap("a", 10, Map.of("app", "x")));
    hub.put(configMap("a", 11, Map.of("app", "x")));
    hub.put(configMap("a", 12, Map.of("app", "y")));
    hub.put(configMap("a", 13, Map.of("app", "y")));
    hub.put(configMap("a", 14, Map.of("app", "x")));
    hub.remove("ns", "a", "15");

    assertThat(drain(watch)).containsExactly("ADDED a@10", "MODIFIED a@11", "DELETED a@12", "ADDED a@14",
        "DELETED a@15");
  }

  @Test
  void rule5_8_initialEventsThenTheEndBookmarkThenOnlyNewerEvents() throws InterruptedException {
    hub.put(configMap("b", 10));
    hub.put(configMap("a", 11));
    hub.remove("ns", "c", "12"); // not cached: nothing
    hub.progress("13");

    Watch<ConfigMap> watch = hub.watch(options().sendInitialEvents(true).allowBookmarks(true).build());
    hub.tick(); // the awaited bookmark at exactly the watch's start
    hub.put(configMap("a", 14));

    assertThat(drain(watch)).containsExactly("ADDED a@11", "ADDED b@10", "BOOKMARK end@13", "MODIFIED a@14");
    assertThat(hub.initialEvents()).isEqualTo(2);
  }

  @Test
  void rule5_8_aBookmarkAtTheStartVersionIsNotRepeatedOnceSent() throws InterruptedException {
    hub.put(configMap("a", 10));
    Watch<ConfigMap> watch = hub.watch(options().allowBookmarks(true).build());
    clock.advance(Duration.ofMinutes(1));

    hub.tick();

    assertThat(drain(watch)).as("nothing newer than the start").isEmpty();
  }

  @Test
  void rule5_8_aWatchFromAResourceVersionReplaysOnlyNewerChanges() throws InterruptedException {
    WatchHubSettings d = WatchHubSettings.DEFAULTS;
    WatchHub<ConfigMap> small = new WatchHub<>("configmaps", WatchObjects.CONFIG_MAPS, clock, new WatchHubSettings(
        d.bookmarkFrequency(), d.maxDispatchBudget(), d.budgetRefillPerSecond(), Duration.ZERO, d.defaultBufferSize(),
        2, d.consumerLinger()));
    small.put(configMap("a", 10));
    small.put(configMap("a", 11));
    small.put(configMap("a", 12));

    Watch<ConfigMap> watch = small.watch(options().resourceVersion("11").build());
    small.put(configMap("a", 13));

    assertThat(drain(watch)).containsExactly("MODIFIED a@12", "MODIFIED a@13");
    assertThatThrownBy(() -> small.watch(options().resourceVersion("10").build()))
        .isInstanceOf(WatchExpiredException.class).hasMessageContaining("too old resource version: 10");
    small.close();
  }

  @Test
  void rule5_8_onExitTheWatchStopsAndClosesItsResult() {
    Watch<ConfigMap> watch = hub.watch(options().build());
    List<String> seen = new CopyOnWriteArrayList<>();
    CompletableFuture<Void> loop = watch.forEachAsync(consumers, event -> seen.add(describe(event)));
    hub.put(configMap("a", 10));
    await().atMost(Duration.ofSeconds(20)).until(() -> seen.size() == 1);

    hub.close();

    loop.orTimeout(30, TimeUnit.SECONDS).join();
    assertThat(watch.isEnded()).isTrue();
    assertThat(hub.watcherCount()).isZero();
    assertThatThrownBy(() -> hub.watch(options().build())).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void theEventsOfAChangeAreMadeOnceAndSharedByTheWatches() throws InterruptedException {
    Watch<ConfigMap> first = hub.watch(options().build());
    Watch<ConfigMap> second = hub.watch(options().build());

    hub.put(configMap("a", 10));
    hub.put(configMap("a", 11));
    hub.remove("ns", "a", "12");

    for (int i = 0; i < 3; i++) {
      WatchEvent<ConfigMap> event = first.poll(NO_WAIT);
      assertThat(second.poll(NO_WAIT)).as(event.type().name()).isSameAs(event);
    }
  }

  @Test
  void outOfOrderResourceVersionsGetTheNextRevision() throws InterruptedException {
    Watch<ConfigMap> watch = hub.watch(options().build());

    hub.put(configMap("a", 20));
    hub.put(configMap("b", 5)); // another object's watch or fetch, older on the API server
    hub.put(configMap("b", 5)); // the same version again: no change

    assertThat(drain(watch)).containsExactly("ADDED a@20", "ADDED b@21");
  }

  @Test
  void anOlderVersionOfACachedObjectIsAStaleObservation() throws InterruptedException {
    Watch<ConfigMap> watch = hub.watch(options().build());

    hub.put(configMap("a", 20));
    hub.put(configMap("a", 19)); // a fetch that finished after a newer watch event
    hub.remove("ns", "a", "21");
    hub.put(configMap("a", 19)); // not cached any more: nothing to compare with

    assertThat(drain(watch)).containsExactly("ADDED a@20", "DELETED a@21", "ADDED a@22");
  }

  @Test
  void aListenerThatThrowsClosesItsWatch() {
    Watch<ConfigMap> watch = hub.watch(options().build());
    CompletableFuture<Void> loop = watch.forEachAsync(consumers, event -> {
      throw new IllegalStateException("listener failed");
    });

    hub.put(configMap("a", 10));

    assertThatThrownBy(() -> loop.orTimeout(30, TimeUnit.SECONDS).join()).hasRootCauseMessage("listener failed");
    assertThat(watch.isEnded()).isTrue();
    assertThat(hub.watcherCount()).isZero();
  }

  @Test
  void stopLeavesNoThreadBehind() {
    WatchHub<ConfigMap> timed = new WatchHub<>("secrets", WatchObjects.CONFIG_MAPS, clock,
        WatchHubSettings.DEFAULTS.withTickPeriod(Duration.ofMillis(10)));
    Watch<ConfigMap> watch = timed.watch(options().allowBookmarks(true).build());
    assertThat(timerThreads()).hasSize(1);

    timed.close();
    timed.close();

    assertThat(timerThreads()).isEmpty();
    assertThat(watch.isEnded()).isTrue();
  }

  private static List<Thread> timerThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("nodelet-watch-timer-secrets") && t.isAlive()).toList();
  }
}
