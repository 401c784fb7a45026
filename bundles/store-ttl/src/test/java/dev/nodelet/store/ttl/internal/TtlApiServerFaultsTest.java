package dev.nodelet.store.ttl.internal;

import static dev.nodelet.objectcache.testing.FaultHarness.NS;
import static dev.nodelet.objectcache.testing.FaultHarness.name;
import static dev.nodelet.objectcache.testing.FaultHarness.pod;
import static dev.nodelet.objectcache.testing.FaultHarness.version;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.kube.KubeClients;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.testing.FaultHarness;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.store.ttl.TtlStoreStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * API server faults against the ttl strategy with the client the {@code nodelet-kube} service builds and
 * {@value #OBJECTS} referenced objects; the test moves the clock past the time-to-live. As the kubelet's TTL store
 * (docs/kubernetes-rules.md, TTL strategy), a copy past its time-to-live is served while the API server cannot be
 * reached and asked again on the next get; with nothing cached the get fails with the first attempt's error. The
 * verdicts are on what is served and asked; the times measured are logged for {@code docs/reliability.md}. Where
 * a call must not wait for the network, the whole run gets a minute: a client with fabric8's default retries
 * (about 20 s a request) or a registration that waited for a fetch could not finish in it.
 */
class TtlApiServerFaultsTest {

  private static final Logger LOG = LoggerFactory.getLogger(TtlApiServerFaultsTest.class);

  private static final int OBJECTS = 200;
  private static final Duration TTL = Duration.ofMinutes(1);
  /** What a run of calls that never wait for the network is given. */
  private static final Duration NO_WAITING = Duration.ofMinutes(1);
  /** An upper bound for slow CI machines. */
  private static final Duration WAIT = Duration.ofSeconds(30);

  private final MutableClock clock = new MutableClock();
  @AutoClose
  private final FaultHarness faults = new FaultHarness(OBJECTS, port -> KubeClients.builder()
      .masterUrl("http://" + InetAddress.getLoopbackAddress().getHostAddress() + ":" + port).build());

  private TtlStoreStrategy strategy(KubernetesClient client) {
    return faults.closeLater(TtlStoreStrategy.builder(client).clock(clock).defaultTtl(TTL).build());
  }

  private long gets() {
    return faults.server().requestCount(Verb.GET, "configmaps");
  }

  private static long millisSince(long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }

  @Test
  void whileTheApiServerIsDownStaleCopiesAreServedAtOnceAndAfterItsRestartEveryGetIsFresh() {
    EmbeddedApiServer server = faults.startServer(EmbeddedApiServer.builder());
    faults.createAll();
    ObjectStore<ConfigMap> store = faults.closeLater(strategy(faults.nodeletClient(server.port()))
        .createStore(ResourceType.CONFIG_MAPS));
    long[] served = new long[OBJECTS];
    for (int i = 0; i < OBJECTS; i++) {
      store.addReference(NS, name(i), "pod-" + i);
      served[i] = version(store.get(NS, name(i)));
    }

    server.stop();
    // fresh copies: answered from memory, the API server is not asked
    for (int i = 0; i < OBJECTS; i++) {
      assertThat(version(store.get(NS, name(i)))).isEqualTo(served[i]);
    }
    // past the time-to-live each get asks once, fails and serves the old copy, which stays stale
    clock.advance(TTL);
    long[] slowest = new long[1];
    long started = System.nanoTime();
    assertTimeoutPreemptively(NO_WAITING, () -> {
      for (int i = 0; i < OBJECTS; i++) {
        long get = System.nanoTime();
        assertThat(version(store.get(NS, name(i)))).isEqualTo(served[i]);
        slowest[0] = Math.max(slowest[0], System.nanoTime() - get);
      }
    });
    long staleGets = millisSince(started);

    server.start();
    long restarted = System.nanoTime();
    for (int i = 0; i < OBJECTS; i++) {
      faults.update(i, "2");
    }
    long written = millisSince(restarted);
    long getsBefore = gets();
    // no clock move: the failed fetches left the copies stale, so the first get of each asks again and is fresh
    long fetched = System.nanoTime();
    for (int i = 0; i < OBJECTS; i++) {
      ConfigMap object = store.get(NS, name(i));
      assertThat(object.getData()).as(name(i)).containsEntry("k", "2");
      assertThat(version(object)).isGreaterThan(served[i]);
      served[i] = version(object);
    }
    long fresh = millisSince(restarted);
    long fetching = millisSince(fetched);
    assertThat(gets() - getsBefore).isEqualTo(OBJECTS);
    // and fresh again for the time-to-live: from memory, never an older version
    for (int i = 0; i < OBJECTS; i++) {
      assertThat(version(store.get(NS, name(i)))).isEqualTo(served[i]);
    }
    assertThat(gets() - getsBefore).isEqualTo(OBJECTS);

    LOG.info("TTL store, API server down: {} stale gets answered in {} ms in all (slowest {} ms); after the restart "
        + "{} updates written in {} ms, every get fresh {} ms after the restart ({} ms for the {} gets)", OBJECTS,
        staleGets, TimeUnit.NANOSECONDS.toMillis(slowest[0]), OBJECTS, written, fresh, fetching, OBJECTS);
  }

  @Test
  void anUnreachableApiServerNeitherBlocksRegistrationNorHangsAGetAndIsUsedOnceItAppears() {
    FaultHarness.Outage outage = faults.unreachableUntilItAppears(this::manager, NO_WAITING, WAIT,
        (name, failure) -> {
          // nothing cached: the first attempt's error is the answer, naming the object and why (fabric8's own message
          // is "An error has occurred.")
          assertThat(failure).isInstanceOf(KubernetesClientException.class)
              .hasMessageStartingWith("cannot get configmaps \"" + NS + "\"/\"" + name + "\": the API server is "
                  + "unreachable (java.net.ConnectException");
        });
    LOG.info("TTL store, API server unreachable, {} objects: {}", OBJECTS, outage);
  }

  /** A ConfigMap manager on the ttl strategy over {@code client}, closed with the harness. */
  private ObjectManager<ConfigMap> manager(KubernetesClient client) {
    SwitchableObjectManager<ConfigMap> manager = faults.closeLater(ObjectManagers.configMaps(client).build());
    manager.useStrategy("ttl", strategy(client));
    return manager;
  }
}
