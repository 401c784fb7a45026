package dev.nodelet.store.watch.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.objectcache.CacheSyncException;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.objectcache.testing.RecordingListener;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The watch strategy rules of docs/kubernetes-rules.md against the embedded API server, with a clock the test moves and the idle sweep called by hand. */
class WatchObjectStoreTest {

  private static final Duration MAX_IDLE = Duration.ofMinutes(5);
  private static final Duration SYNC_WAIT = Duration.ofSeconds(1);
  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines

  private final MutableClock clock = new MutableClock();
  private final RecordingListener<ConfigMap> listener = new RecordingListener<>();
  private final RecordingTimer timer = new RecordingTimer();
  private EmbeddedApiServer server;
  private KubernetesClient client;
  private ReflectorEngine reflectors;
  private WatchObjectStore<ConfigMap> store;
  private long listsBefore;

  private void start(int historySize) {
    server = EmbeddedApiServer.builder().historySize(historySize).build().start();
    client = new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder(server.clientConfig()).withWatchReconnectInterval(50)
            // the JDK client puts every HTTP/2 stream on one connection, which takes 100; a test opens 101 watches
            .withHttp2Disable(true).build()).build();
    // a cold JVM needs longer than the sync wait for its first request
    client.configMaps().inNamespace("ns").list();
    listsBefore = server.requestCount(Verb.LIST, "configmaps");
    // the sweep and the access clock never tick during a test (an hour): sweeps are called by hand; the timer only
    // opens queued watches
    // LIST then WATCH, so that each sync of an object is one LIST the server counts
    reflectors = ReflectorEngine.builder(client).watchList(false)
        .backoff(Duration.ofMillis(250), Duration.ofSeconds(2)).build();
    store = new WatchObjectStore<>(client, reflectors, ResourceType.CONFIG_MAPS, clock,
        new WatchSettings(MAX_IDLE, SYNC_WAIT, Duration.ofHours(1)), timer, listener, new WatchMetrics());
  }

  private void start() {
    start(10_000);
  }

  @AfterEach
  void stop() {
    store.close();
    reflectors.close();
    timer.shutdownNow();
    client.close();
    server.close();
  }

  private ConfigMap put(String name, String value) {
    return client.configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
        .endMetadata().addToData("k", value).build()).createOr(e -> e.update());
  }

  private ConfigMap putImmutable(String name, String value) {
    return client.configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
        .endMetadata().addToData("k", value).withImmutable(true).build()).create();
  }

  private void delete(String name) {
    client.configMaps().inNamespace("ns").withName(name).delete();
    await().atMost(WAIT).until(() -> client.configMaps().inNamespace("ns").withName(name).get() == null);
  }

  private int watches(String name) {
    return server.openWatches("configmaps", "metadata.name=" + name);
  }

  private long lists() {
    return server.requestCount(Verb.LIST, "configmaps") - listsBefore;
  }

  private String value(String name) {
    return store.get("ns", name).getData().get("k");
  }

  @Test
  void aGetWaitsForTheFirstListAndThenFollowsTheWatch() {
    start();
    put("a", "1");
    store.addReference("ns", "a", "pod-1");
    assertThat(value("a")).isEqualTo("1");
    put("a", "2");
    await().atMost(WAIT).untilAsserted(() -> assertThat(value("a")).isEqualTo("2"));
    assertThat(lists()).isEqualTo(1);
    assertThat(watches("a")).isEqualTo(1);
  }

  @Test
  void theListenerHearsEveryAddUpdateAndDeleteTheWatchSees() {
    start();
    String v1 = put("a", "1").getMetadata().getResourceVersion();
    store.addReference("ns", "a", "pod-1");
    await().atMost(WAIT).until(() -> listener.heard().equals(List.of("changed ns/a@" + v1)));
    String v2 = put("a", "2").getMetadata().getResourceVersion();
    await().atMost(WAIT).until(() -> listener.heard().size() == 2);
    delete("a");
    await().atMost(WAIT).until(() -> listener.heard().size() == 3);

    List<String> heard = listener.take();
    assertThat(heard).startsWith("changed ns/a@" + v1, "changed ns/a@" + v2);
    // the watch's DELETED event carries the version of the deletion
    assertThat(heard.get(2)).startsWith("deleted ns/a@").isNotEqualTo("deleted ns/a@null");
    assertThat(Long.parseLong(heard.get(2).substring("deleted ns/a@".length()))).isGreaterThan(Long.parseLong(v2));
    // a reference change is the manager's business, not an observation
    store.deleteReference("ns", "a", "pod-1");
    assertThat(listener.take()).isEmpty();
  }

  @Test
  void anUnregisteredObjectIsAnError() {
    start();
    put("a", "1");
    assertThatThrownBy(() -> store.get("ns", "a"))
        .isInstanceOf(NotRegisteredException.class)
        .hasMessage("object \"ns\"/\"a\" not registered");
    assertThat(lists()).isZero();
  }

  @Test
  void referencesAreCountedPerPodAndTheLastOneStopsTheWatch() {
    start();
    put("a", "1");
    store.addReference("ns", "a", "pod-1");
    store.addReference("ns", "a", "pod-2");
    store.addReference("ns", "a", "pod-1");
    assertThat(value("a")).isEqualTo("1");

    store.deleteReference("ns", "a", "pod-1");
    store.deleteReference("ns", "a", "pod-2");
    assertThat(value("a")).isEqualTo("1");
    store.deleteReference("ns", "a", "pod-1");
    assertThatThrownBy(() -> store.get("ns", "a")).isInstanceOf(NotRegisteredException.class);
    await().atMost(WAIT).until(() -> watches("a") == 0);
  }

  @Test
  void deletingAReferenceThePodNeverHeldChangesNothing() {
    start();
    put("a", "1");
    store.addReference("ns", "a", "pod-1");
    store.deleteReference("ns", "a", "pod-2");
    store.deleteReference("ns", "a", "pod-2");
    store.deleteReference("ns", "b", "pod-1");
    assertThat(value("a")).isEqualTo("1");
    // the kubelet would now hold pod-2 at -2 and never free the item
    store.deleteReference("ns", "a", "pod-1");
    assertThatThrownBy(() -> store.get("ns", "a")).isInstanceOf(NotRegisteredException.class);
    await().atMost(WAIT).until(() -> watches("a") == 0);
  }

  @Test
  void aMissingObjectIsNotFoundUntilItIsCreated() {
    start();
    store.addReference("ns", "later", "pod-1");
    assertThatThrownBy(() -> store.get("ns", "later"))
        .isInstanceOf(ObjectNotFoundException.class)
        .hasMessage("configmaps \"later\" not found");
    assertThat(listener.take()).containsExactly("deleted ns/later@null");
    put("later", "1");
    await().atMost(WAIT).ignoreExceptionsInstanceOf(ObjectNotFoundException.class).untilAsserted(() -> assertThat(value("later")).isEqualTo("1"));
  }

  @Test
  void aGetThatCannotSyncFailsAfterTheWaitBoundAndStillCountsAsAccess() {
    start();
    put("a", "1");
    // far beyond the sync wait, so the get gives up while the list is unanswered however slow the machine
    server.delayResponses(SYNC_WAIT.multipliedBy(8));
    store.addReference("ns", "a", "pod-1");

    // an item still on its first list is never recycled
    clock.advance(MAX_IDLE.multipliedBy(2));
    store.sweep();

    long started = System.nanoTime();
    assertThatThrownBy(() -> store.get("ns", "a"))
        .isInstanceOf(CacheSyncException.class)
        .hasMessage("failed to sync configmaps cache: timed out waiting for the condition (configmaps \"ns\"/\"a\": "
            + "no answer from the API server yet)");
    // the wait is real, so never shorter than the bound; the message shows it ended before the answer came
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(SYNC_WAIT);

    server.delayResponses(Duration.ZERO);
    await().atMost(WAIT).ignoreExceptionsInstanceOf(CacheSyncException.class)
        .untilAsserted(() -> assertThat(value("a")).isEqualTo("1"));
    assertThat(lists()).isEqualTo(1);

    // the failed get counted as an access: the item is not idle yet, so it was not stopped and needs no relist
    clock.advance(MAX_IDLE);
    store.sweep();
    assertThat(value("a")).isEqualTo("1");
    assertThat(lists()).isEqualTo(1);
  }

  @Test
  void anIdleItemStopsAndItsNextGetWaitsForAFreshList() {
    start();
    put("a", "1");
    store.addReference("ns", "a", "pod-1");
    assertThat(value("a")).isEqualTo("1");
    await().atMost(WAIT).until(() -> watches("a") == 1);

    // idle for exactly maxIdleTime is not longer than it: still running, so no relist
    clock.advance(MAX_IDLE);
    store.sweep();
    assertThat(value("a")).isEqualTo("1");
    assertThat(lists()).isEqualTo(1);
    assertThat(store.state("ns", "a")).contains(ObjectState.RUNNING);
    clock.advance(MAX_IDLE.plusMillis(1));
    store.sweep();
    assertThat(store.state("ns", "a")).contains(ObjectState.IDLE);
    await().atMost(WAIT).until(() -> watches("a") == 0);

    // a stopped item is not initialized: it does not serve the old copy while it relists
    put("a", "2");
    server.delayResponses(Duration.ofSeconds(3));
    assertThatThrownBy(() -> store.get("ns", "a")).isInstanceOf(CacheSyncException.class);
    server.delayResponses(Duration.ZERO);
    await().atMost(WAIT).ignoreExceptionsInstanceOf(CacheSyncException.class)
        .untilAsserted(() -> assertThat(value("a")).isEqualTo("2"));
    assertThat(lists()).isEqualTo(2);
    await().atMost(WAIT).until(() -> watches("a") == 1);
    assertThat(store.state("ns", "a")).contains(ObjectState.RUNNING);
    assertThat(store.state("ns", "unknown")).isEmpty();
  }

  @Test
  void anImmutableObjectStopsItsWatchAndIsServedFromMemory() {
    start();
    putImmutable("a", "1");
    store.addReference("ns", "a", "pod-1");
    assertThat(value("a")).isEqualTo("1");
    await().atMost(WAIT).until(() -> watches("a") == 0);
    assertThat(store.state("ns", "a")).contains(ObjectState.IMMUTABLE);

    long lists = lists();
    long gets = server.requestCount(Verb.GET, "configmaps");
    clock.advance(MAX_IDLE.multipliedBy(3));
    store.sweep();
    assertThat(value("a")).isEqualTo("1");
    assertThat(value("a")).isEqualTo("1");
    assertThat(lists()).isEqualTo(lists);
    assertThat(server.requestCount(Verb.GET, "configmaps")).isEqualTo(gets);
    assertThat(watches("a")).isZero();
  }

  @Test
  void anImmutableObjectDeletedAndRecreatedIsNotServedStaleToANewPod() {
    start();
    putImmutable("a", "1");
    store.addReference("ns", "a", "pod-1");
    assertThat(value("a")).isEqualTo("1");
    await().atMost(WAIT).until(() -> watches("a") == 0);

    // the same object: one GET checks its UID and the copy is served on
    long gets = server.requestCount(Verb.GET, "configmaps");
    long lists = lists();
    store.addReference("ns", "a", "pod-2");
    assertThat(value("a")).isEqualTo("1");
    assertThat(value("a")).isEqualTo("1");
    assertThat(server.requestCount(Verb.GET, "configmaps")).isEqualTo(gets + 1);
    assertThat(lists()).isEqualTo(lists);

    delete("a");
    String v2 = put("a", "2").getMetadata().getResourceVersion();
    store.addReference("ns", "a", "pod-3");
    listener.take();
    assertThat(value("a")).isEqualTo("2");
    // the stopped watch saw neither: the verification tells that the kept object is gone and another one came
    assertThat(listener.heard()).startsWith("deleted ns/a@null", "changed ns/a@" + v2);
    // a mutable object again: watched again, and changes arrive
    await().atMost(WAIT).until(() -> watches("a") == 1);
    put("a", "3");
    await().atMost(WAIT).untilAsserted(() -> assertThat(value("a")).isEqualTo("3"));
  }

  @Test
  void anImmutableObjectDeletedIsNotFoundForANewPod() {
    start();
    putImmutable("a", "1");
    store.addReference("ns", "a", "pod-1");
    assertThat(value("a")).isEqualTo("1");
    delete("a");
    store.addReference("ns", "a", "pod-2");
    assertThatThrownBy(() -> store.get("ns", "a"))
        .isInstanceOf(ObjectNotFoundException.class)
        .hasMessage("configmaps \"a\" not found");
  }

  @Test
  void afterShutdownNothingRestartsAndOnlyImmutableCopiesAreServed() {
    start();
    put("mutable", "1");
    putImmutable("immutable", "1");
    put("new", "1");
    store.addReference("ns", "mutable", "pod-1");
    store.addReference("ns", "immutable", "pod-1");
    assertThat(value("mutable")).isEqualTo("1");
    assertThat(value("immutable")).isEqualTo("1");

    store.close();
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 0);
    long lists = lists();
    assertThat(store.state("ns", "mutable")).contains(ObjectState.STOPPED);
    assertThat(store.state("ns", "immutable")).contains(ObjectState.IMMUTABLE);

    assertThatThrownBy(() -> store.get("ns", "mutable"))
        .isInstanceOf(CacheSyncException.class)
        .hasMessage("failed to sync configmaps cache: timed out waiting for the condition (configmaps \"ns\"/"
            + "\"mutable\": the store is closed)");
    store.addReference("ns", "new", "pod-2");
    assertThatThrownBy(() -> store.get("ns", "new")).isInstanceOf(CacheSyncException.class);
    assertThat(value("immutable")).isEqualTo("1");
    clock.advance(MAX_IDLE.multipliedBy(2));
    store.sweep();
    assertThat(lists()).isEqualTo(lists);
    assertThat(server.openWatches("configmaps")).isZero();
  }

  @Test
  void aWatchThatFellBehindTheHistoryRelistsAndStaysMonotonic() {
    start(3);
    ConfigMap first = put("a", "1");
    store.addReference("ns", "a", "pod-1");
    assertThat(value("a")).isEqualTo("1");
    long lists = lists();
    // the watch opens after the list that synced the item
    await().atMost(WAIT).until(() -> watches("a") == 1);

    // while the watch is down, more happens than the history keeps: resuming gets 410 Gone
    server.failNext(Verb.WATCH, "configmaps", Integer.MAX_VALUE, 500);
    server.cutWatches();
    // the cut is done on the server's event loop: wait for it, or the events below could still reach the watch
    await().atMost(WAIT).until(() -> watches("a") == 0);
    for (int i = 0; i < 5; i++) {
      put("other" + i, "1");
    }
    put("a", "2");
    server.clearFailures(); // only now may the watch resume, from a resourceVersion the history has lost
    await().atMost(WAIT).untilAsserted(() -> assertThat(value("a")).isEqualTo("2"));
    assertThat(lists()).isGreaterThan(lists);
    assertThat(Long.parseLong(store.get("ns", "a").getMetadata().getResourceVersion()))
        .isGreaterThan(Long.parseLong(first.getMetadata().getResourceVersion()));
  }

  @Test
  void threadsDoNotGrowWithTheNumberOfWatchedObjects() {
    start();
    put("warm-up", "1");
    store.addReference("ns", "warm-up", "pod-0");
    assertThat(value("warm-up")).isEqualTo("1");
    long before = storeSideThreads();
    for (int i = 0; i < 100; i++) {
      put("cm" + i, "v");
      store.addReference("ns", "cm" + i, "pod-" + i);
    }
    for (int i = 0; i < 100; i++) {
      String name = "cm" + i;
      await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> assertThat(value(name)).isEqualTo("v"));
    }
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 101);
    assertThat(storeSideThreads() - before).isLessThan(10);
  }

  /**
   * The live threads but those of the test's API server and HTTP client in this JVM (Vert.x; fabric8's JDK client
   * over HTTP/1.1, a connection per watch, whose pool grows with the requests in flight on a busy machine; the common
   * pool): the store's own threads.
   */
  private static long storeSideThreads() {
    return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
        .filter(name -> !name.startsWith("vert.x-") && !name.startsWith("HttpClient-")
            && !name.startsWith("JdkHttpClientFactory-") && !name.startsWith("ForkJoinPool"))
        .count();
  }

  @Test
  void aReferenceOnlyQueuesItsWatchAndOneDroppedBeforeItsTurnOpensNothing() throws InterruptedException {
    start();
    put("a", "1");
    put("b", "1");
    CountDownLatch held = hold();

    // the timer thread, which opens the reflectors, is busy: registering still returns, and nothing is opened
    store.addReference("ns", "a", "pod-1");
    store.addReference("ns", "b", "pod-2");
    store.deleteReference("ns", "a", "pod-1");
    assertThat(store.openWatches()).isZero();

    held.countDown();
    assertThat(value("b")).isEqualTo("1");
    await().atMost(WAIT).until(() -> watches("b") == 1);
    assertThat(lists()).isEqualTo(1); // b's; a was dropped before its turn and never listed
    assertThat(watches("a")).isZero();
  }

  @Test
  void aRegistrationWakesNoThreadAndTheFirstGetOpensThePodsReferencesAtOnce() throws InterruptedException {
    start();
    for (int i = 0; i < 10; i++) {
      put("cm" + i, "v");
    }
    CountDownLatch held = hold();
    timer.delays.clear();
    int queued = timer.getQueue().size();

    for (int i = 0; i < 10; i++) {
      store.addReference("ns", "cm" + i, "pod-1");
    }
    // nothing handed to the timer: the references only wait in the store's queue
    assertThat(timer.delays).isEmpty();
    assertThat(timer.getQueue()).hasSize(queued);
    assertThat(store.openWatches()).isZero();

    // the timer is still busy: the get opens all ten on its own thread and waits for its object only
    assertThat(value("cm0")).isEqualTo("v");
    for (int i = 0; i < 10; i++) {
      String name = "cm" + i;
      await().atMost(WAIT).until(() -> watches(name) == 1);
    }
    assertThat(lists()).isEqualTo(10);
    held.countDown();
  }

  @Test
  void referencesNoGetReadsOpenAtTheTimersNextTick() {
    start();
    put("a", "1");
    store.addReference("ns", "a", "pod-1");
    assertThat(timer.delays).isEmpty(); // nothing is scheduled for it: the periodic tick opens it

    await().atMost(WAIT).until(() -> watches("a") == 1);
    assertThat(store.openWatches()).isEqualTo(1);
  }

  @Test
  void closingTheStoreLeavesNoOpeningOnTheTimer() throws InterruptedException {
    start();
    put("a", "1");
    CountDownLatch held = hold();
    store.addReference("ns", "a", "pod-1");
    assertThat(timer.getQueue()).isNotEmpty(); // the periodic ticks, the one that opens "a" among them

    store.close();
    assertThat(timer.getQueue()).isEmpty();
    held.countDown();
    assertThat(store.openWatches()).isZero();
    assertThat(watches("a")).isZero();
  }

  /** Keeps the timer thread busy until the returned latch is counted down. */
  private CountDownLatch hold() throws InterruptedException {
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch holding = new CountDownLatch(1);
    timer.execute(() -> {
      holding.countDown();
      try {
        held.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    assertThat(holding.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    return held;
  }

  /** The store's timer, noting the delay of every one-shot task it is given (an {@code execute} is a delay of 0). */
  private static final class RecordingTimer extends ScheduledThreadPoolExecutor {

    final List<Long> delays = new CopyOnWriteArrayList<>();

    RecordingTimer() {
      super(1);
      setRemoveOnCancelPolicy(true);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      delays.add(unit.toNanos(delay));
      return super.schedule(command, delay, unit);
    }
  }
}
