package dev.nodelet.store.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.store.watch.internal.WatchBudget;
import dev.nodelet.testing.apiserver.Verb;
import dev.nodelet.testing.metrics.Scrape;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The watch budget ({@code max.watches}) against the embedded API server: the server's count of open watches is
 * sampled every few milliseconds throughout each test and never exceeds the budget; the time-to-live of polled
 * objects follows a clock the test moves.
 */
class WatchBudgetTest {

  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofSeconds(30);

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();
  private final MutableClock clock = new MutableClock();
  private final WatchStoreMetrics metrics = new WatchStoreMetrics();
  private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
  /** The most watches the server had open at one sample. */
  private final AtomicInteger mostWatches = new AtomicInteger();
  private WatchStoreStrategy strategy;
  private ObjectStore<ConfigMap> store;

  private void start(int budget) {
    strategy = WatchStoreStrategy.builder(api.client()).clock(clock).manualTicks().maxWatches(budget)
        .polledTtl(TTL).metrics(metrics).build();
    store = strategy.createStore(ResourceType.CONFIG_MAPS);
    sampler.scheduleWithFixedDelay(() -> mostWatches.accumulateAndGet(api.server().openWatches("configmaps"),
        Math::max), 0, 2, TimeUnit.MILLISECONDS);
  }

  @AfterEach
  void stop() throws InterruptedException {
    sampler.shutdownNow();
    sampler.awaitTermination(10, TimeUnit.SECONDS);
    if (strategy != null) {
      strategy.close();
    }
  }

  private static String name(int i) {
    return String.format("cm-%02d", i);
  }

  private void put(String name, String value) {
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
        .endMetadata().addToData("k", value).build()).createOr(e -> e.update());
  }

  private void putImmutable(String name) {
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
        .endMetadata().addToData("k", "fixed").withImmutable(true).build()).create();
  }

  /** Creates and references {@code count} objects, {@code cm-00} first. */
  private void referenceObjects(int count) {
    for (int i = 0; i < count; i++) {
      put(name(i), "1");
    }
    for (int i = 0; i < count; i++) {
      store.addReference("ns", name(i), "pod-" + i);
    }
  }

  private String value(String name) {
    return store.get("ns", name).getData().get("k");
  }

  private int watches() {
    return api.server().openWatches("configmaps");
  }

  private int watches(String name) {
    return api.server().openWatches("configmaps", "metadata.name=" + name);
  }

  private ObjectState state(String name) {
    return store.state("ns", name).orElseThrow();
  }

  private double metric(String series) {
    return Scrape.value(metrics::collect, series);
  }

  private List<String> inState(int count, ObjectState state) {
    return IntStream.range(0, count).mapToObj(WatchBudgetTest::name).filter(n -> state(n) == state).toList();
  }

  /** Lets the sampler see the server settle, then checks every sample so far. */
  private void assertWithinBudget(int budget) {
    await().atMost(WAIT).until(() -> watches() == strategyObjects());
    assertThat(mostWatches.get()).as("open watches on the server at any sample").isLessThanOrEqualTo(budget);
  }

  private int strategyObjects() {
    return (int) (metric("nodelet_store_watch_objects{resource=\"configmaps\",state=\"watched\"}"));
  }

  @Test
  void twentyObjectsUnderABudgetOfFive() {
    start(5);
    referenceObjects(20);
    await().atMost(WAIT).until(() -> watches() == 5);
    assertWithinBudget(5);
    for (int i = 0; i < 20; i++) {
      assertThat(value(name(i))).isEqualTo("1");
    }
    assertThat(inState(20, ObjectState.RUNNING)).containsExactly(name(0), name(1), name(2), name(3), name(4));
    assertThat(inState(20, ObjectState.POLLED)).hasSize(15);
    assertThat(metric("nodelet_store_watch_objects{resource=\"configmaps\",state=\"watched\"}")).isEqualTo(5);
    assertThat(metric("nodelet_store_watch_objects{resource=\"configmaps\",state=\"polled\"}")).isEqualTo(15);
    assertThat(metric("nodelet_store_watch_polled_fetches_total{resource=\"configmaps\"}")).isEqualTo(15);
    // a fresh polled copy is as fresh as the TTL strategy's: its state says it is polled
    assertThat(store.staleness("ns", name(10))).isEmpty();
    assertThat(store.staleness("ns", name(0))).isEmpty();
    clock.advance(TTL);
    assertThat(store.staleness("ns", name(10))).hasValueSatisfying(why -> assertThat(why)
        .startsWith("polled, not watched (the watch budget of 5 is spent): its TTL of 30 s expired (fetched "));
    assertThat(store.staleness("ns", name(0))).isEmpty();
    assertWithinBudget(5);
  }

  @Test
  void aPolledCopyIsRefreshedOnTheNextGetUnlessItsFetchFailedOrTheStoreIsClosed() {
    start(1);
    referenceObjects(2);
    assertThat(state(name(1))).isEqualTo(ObjectState.POLLED);
    assertThat(store.staleness("ns", name(1))).hasValueSatisfying(why -> assertThat(why).contains("not fetched yet"));
    assertThat(store.refreshedOnNextGet("ns", name(1))).as("the next get fetches").isTrue();
    assertThat(value(name(1))).isEqualTo("1");
    assertThat(store.refreshedOnNextGet("ns", name(1))).as("fresh").isFalse();

    clock.advance(TTL);
    assertThat(store.refreshedOnNextGet("ns", name(1))).as("expired: the next get fetches").isTrue();
    api.server().failNext(Verb.GET, "configmaps", 1, 500);
    assertThat(value(name(1))).as("the copy held, stale").isEqualTo("1");
    assertThat(store.staleness("ns", name(1)))
        .hasValueSatisfying(why -> assertThat(why).contains("its last fetch failed"));
    assertThat(store.refreshedOnNextGet("ns", name(1))).as("a failure").isFalse();
    assertThat(value(name(1))).isEqualTo("1");
    assertThat(store.staleness("ns", name(1))).isEmpty();

    clock.advance(TTL);
    strategy.close();
    assertThat(store.staleness("ns", name(1))).hasValueSatisfying(why -> assertThat(why).contains("store is closed"));
    assertThat(store.refreshedOnNextGet("ns", name(1))).as("no get fetches any more").isFalse();
    assertThatThrownBy(() -> store.get("ns", name(1))).hasMessageContaining("the store is closed");
  }

  @Test
  void aWatchedObjectsUpdateComesThroughItsWatch() {
    start(5);
    referenceObjects(20);
    assertThat(value(name(2))).isEqualTo("1");
    put(name(2), "2");
    // the clock stands still: only the watch can bring it
    await().atMost(WAIT).until(() -> value(name(2)).equals("2"));
    assertWithinBudget(5);
  }

  @Test
  void aPolledObjectsUpdateIsSeenOnceItsCopyIsOlderThanTheTtl() {
    start(5);
    referenceObjects(20);
    assertThat(value(name(12))).isEqualTo("1");
    put(name(12), "2");
    long fetches = server(Verb.GET);
    assertThat(value(name(12))).isEqualTo("1");
    clock.advance(TTL.minusMillis(1));
    assertThat(value(name(12))).as("just before the TTL").isEqualTo("1");
    assertThat(server(Verb.GET)).isEqualTo(fetches);
    clock.advance(Duration.ofMillis(1));
    assertThat(value(name(12))).as("at the TTL").isEqualTo("2");
    assertThat(server(Verb.GET)).isEqualTo(fetches + 1);
    assertWithinBudget(5);
  }

  private long server(Verb verb) {
    return api.server().requestCount(verb, "configmaps");
  }

  @Test
  void aPolledObjectReadAgainSoonTakesTheWatchOfTheColdestOne() {
    startAndReadAPolledObjectAfterTheOthers(name(15));
    assertThat(state(name(15))).isEqualTo(ObjectState.POLLED);
    clock.advance(Duration.ofSeconds(1));
    // read again, sooner than any watched object was: it is the hotter one
    assertThat(value(name(15))).isEqualTo("1");
    List<String> demoted = inState(5, ObjectState.POLLED);
    assertThat(demoted).hasSize(1);
    awaitGraceThenTick(name(15), 4);
    assertThat(watches(demoted.get(0))).isZero();
    await().atMost(WAIT).until(() -> watches(name(15)) == 1);
    // the server counts the watch once it is open; the store runs it once its first answer arrived
    await().atMost(WAIT).until(() -> state(name(15)) == ObjectState.RUNNING);
    assertThat(watches(demoted.get(0))).isZero();
    assertWithinBudget(5);
    assertThat(metric("nodelet_store_watch_budget_moves_total{resource=\"configmaps\",to=\"watched\"}"))
        .isEqualTo(1);

    // its updates come through the watch now, with the clock standing still
    put(name(15), "2");
    await().atMost(WAIT).until(() -> value(name(15)).equals("2"));
    assertWithinBudget(5);
  }

  /**
   * Twenty objects under a budget of five, then {@code polled} read 10 s after the watched ones were: read once more
   * soon, it is the hottest object.
   */
  private void startAndReadAPolledObjectAfterTheOthers(String polled) {
    start(5);
    referenceObjects(20);
    assertWithinBudget(5);
    clock.advance(Duration.ofSeconds(10));
    strategy.tick();
    assertThat(value(polled)).isEqualTo("1");
  }

  /**
   * A promoted object stays polled, its watch unopened, until the grace of the watch it displaced has passed on the
   * clock: the server ends that watch (its count drops to {@code othersOpen}), then the clock moves past the grace
   * and the strategy ticks.
   */
  private void awaitGraceThenTick(String promoted, int othersOpen) {
    await().atMost(WAIT).untilAsserted(() -> assertThat(watches()).as("watches open on the server; polled: %s",
        inState(20, ObjectState.POLLED)).isEqualTo(othersOpen));
    assertThat(state(promoted)).as("promoted, polled until the grace has passed").isEqualTo(ObjectState.POLLED);
    assertThat(watches(promoted)).isZero();
    clock.advance(Duration.ofMillis(WatchBudget.CLOSE_GRACE_MILLIS - 1));
    strategy.tick();
    assertThat(state(promoted)).as("1 ms before the grace has passed").isEqualTo(ObjectState.POLLED);
    clock.advance(Duration.ofMillis(1));
    strategy.tick();
  }

  @Test
  void aPromotedObjectIsPolledUntilItsWatchDelivers() {
    startAndReadAPolledObjectAfterTheOthers(name(15));
    // the watch that is to replace its polling cannot sync
    api.server().failNext(Verb.WATCH, "configmaps", 1_000, 500);
    api.server().failNext(Verb.LIST, "configmaps", 1_000, 500);
    long watchRequests = server(Verb.WATCH);
    clock.advance(Duration.ofSeconds(1));
    assertThat(value(name(15))).isEqualTo("1");
    awaitGraceThenTick(name(15), 4);
    await().atMost(WAIT).until(() -> server(Verb.WATCH) > watchRequests);

    put(name(15), "2");
    assertThat(state(name(15))).isEqualTo(ObjectState.POLLED);
    assertThat(value(name(15))).as("within the TTL").isEqualTo("1");
    clock.advance(TTL);
    assertThat(value(name(15))).as("the TTL passed and no watch delivered: fetched again").isEqualTo("2");

    api.server().clearFailures();
    await().atMost(WAIT).until(() -> state(name(15)) == ObjectState.RUNNING);
    put(name(15), "3");
    await().atMost(WAIT).until(() -> value(name(15)).equals("3"));
    assertWithinBudget(5);
  }

  @Test
  void promotionChurnNeverOpensMoreWatchesThanTheBudget() {
    start(5);
    referenceObjects(20);
    assertWithinBudget(5);
    int promotions = 40;
    for (int i = 0; i < promotions; i++) {
      // each round makes a polled object the hottest: read, then read again a tick later
      String next = inState(20, ObjectState.POLLED).get(0);
      clock.advance(Duration.ofSeconds(1));
      strategy.tick();
      value(next);
      clock.advance(Duration.ofSeconds(1));
      strategy.tick();
      value(next);
      // demoted at once, watched once the demoted watch has ended
      assertThat(inState(20, ObjectState.RUNNING)).hasSize(4);
      awaitGraceThenTick(next, 4);
      await().atMost(WAIT).until(() -> state(next) == ObjectState.RUNNING);
    }
    assertThat(metric("nodelet_store_watch_budget_moves_total{resource=\"configmaps\",to=\"watched\"}"))
        .isEqualTo(promotions);
    assertWithinBudget(5);
    // the watches that took the slots deliver
    String watched = inState(20, ObjectState.RUNNING).get(0);
    put(watched, "2");
    await().atMost(WAIT).until(() -> value(watched).equals("2"));
  }

  @Test
  void objectsReadInASteadyRoundDoNotTradeWatches() {
    start(5);
    referenceObjects(20);
    for (int round = 0; round < 3; round++) {
      clock.advance(Duration.ofSeconds(1));
      strategy.tick();
      for (int i = 0; i < 20; i++) {
        assertThat(value(name(i))).isEqualTo("1");
      }
    }
    assertThat(metric("nodelet_store_watch_budget_moves_total{resource=\"configmaps\",to=\"watched\"}")).isZero();
    assertThat(inState(20, ObjectState.RUNNING)).hasSize(5);
    assertWithinBudget(5);
  }

  @Test
  void anImmutableObjectHoldsNoWatchWatchedOrPolled() {
    start(2);
    putImmutable("fixed-1");
    put("mutable", "1");
    putImmutable("fixed-2");
    store.addReference("ns", "fixed-1", "pod-1");
    store.addReference("ns", "mutable", "pod-1");
    store.addReference("ns", "fixed-2", "pod-1");
    assertThat(state("fixed-2")).isEqualTo(ObjectState.POLLED);

    // seen immutable while watched: its watch ends and its slot is free
    assertThat(store.get("ns", "fixed-1").getData()).containsEntry("k", "fixed");
    assertThat(state("fixed-1")).isEqualTo(ObjectState.IMMUTABLE);
    await().atMost(WAIT).until(() -> watches("fixed-1") == 0);

    // seen immutable while polled: never watched, however often it is read
    for (int i = 0; i < 3; i++) {
      clock.advance(Duration.ofSeconds(5));
      strategy.tick();
      assertThat(store.get("ns", "fixed-2").getData()).containsEntry("k", "fixed");
    }
    assertThat(state("fixed-2")).isEqualTo(ObjectState.IMMUTABLE);
    assertThat(watches("fixed-2")).isZero();

    // the freed slot goes to the next object that needs one once the ended watch's grace has passed (the clock moved
    // 15 s since)
    put("late", "1");
    store.addReference("ns", "late", "pod-2");
    assertThat(value("late")).isEqualTo("1");
    assertThat(state("late")).isEqualTo(ObjectState.RUNNING);
    await().atMost(WAIT).until(() -> watches() == 2);
    assertThat(mostWatches.get()).isLessThanOrEqualTo(2);
  }

  @Test
  void aLowerBudgetEndsWatchesAndNoBudgetWatchesEveryObject() {
    start(5);
    referenceObjects(20);
    assertWithinBudget(5);
    for (int i = 0; i < 20; i++) {
      value(name(i));
    }

    strategy.maxWatches(2);
    await().atMost(WAIT).until(() -> watches() == 2);
    assertThat(inState(20, ObjectState.POLLED)).hasSize(18);
    assertThat(mostWatches.get()).isLessThanOrEqualTo(5);
    for (int i = 0; i < 20; i++) {
      assertThat(value(name(i))).isEqualTo("1");
    }

    strategy.maxWatches(0);
    await().atMost(WAIT).until(() -> watches() == 20);
    // each is polled until its new watch delivers
    await().atMost(WAIT).until(() -> inState(20, ObjectState.RUNNING).size() == 20);
    put(name(19), "2");
    await().atMost(WAIT).until(() -> value(name(19)).equals("2"));
    assertThat(strategy.maxWatches()).isZero();
  }

  @Test
  void theNodesTtlAnnotationRulesThePolledCopies() {
    strategy = WatchStoreStrategy.builder(api.client()).clock(clock).manualTicks().maxWatches(1).polledTtl(TTL)
        .nodeAnnotations(key -> key.equals(WatchStoreStrategy.TTL_ANNOTATION) ? java.util.Optional.of("5")
            : java.util.Optional.empty()).build();
    store = strategy.createStore(ResourceType.CONFIG_MAPS);
    referenceObjects(2);
    assertThat(value(name(1))).isEqualTo("1");
    put(name(1), "2");
    clock.advance(Duration.ofMillis(4_999));
    assertThat(value(name(1))).isEqualTo("1");
    assertThat(store.staleness("ns", name(1))).isEmpty();
    clock.advance(Duration.ofMillis(1));
    assertThat(store.staleness("ns", name(1))).hasValueSatisfying(why -> assertThat(why).contains("TTL of 5 s"));
    assertThat(value(name(1))).as("5 s, as the annotation says").isEqualTo("2");
  }

  @Test
  void anInvalidBudgetIsRefusedNamingIt() {
    assertThatThrownBy(() -> WatchStoreStrategy.builder(api.client()).maxWatches(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxWatches must be between 0 (no budget) and 1000000, was -1");
    assertThatThrownBy(() -> WatchStoreStrategy.builder(api.client()).polledTtl(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("polledTtl must be between 0 and");
    start(3);
    assertThatThrownBy(() -> strategy.maxWatches(2_000_000)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxWatches must be between 0 (no budget) and 1000000, was 2000000");
    assertThat(strategy.maxWatches()).isEqualTo(3);
  }
}
