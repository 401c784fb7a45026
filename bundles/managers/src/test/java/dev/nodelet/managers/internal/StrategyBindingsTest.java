package dev.nodelet.managers.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.cache.core.testing.RecordingStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class StrategyBindingsTest {

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private SwitchableObjectManager<Secret> manager;
  private StrategyBindings bindings;
  private final List<String> log = Collections.synchronizedList(new ArrayList<>());

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    manager = ObjectManagers.secrets(client).build();
    bindings = new StrategyBindings(manager);
  }

  @AfterEach
  void stop() {
    manager.close();
    client.close();
    server.close();
  }

  private static Map<String, Object> properties(String name, long id, int ranking) {
    return Map.of(StoreStrategy.PROPERTY, name, "service.id", id, "service.ranking", ranking);
  }

  /** Binds {@code strategy} as Declarative Services would; returns the strategy the manager uses then. */
  private String bind(StoreStrategy strategy, Map<String, Object> properties) {
    bindings.bind(strategy, properties);
    return inUse();
  }

  /** Unbinds {@code strategy} as Declarative Services would; returns the strategy the manager uses then. */
  private String unbind(StoreStrategy strategy, Map<String, Object> properties) {
    bindings.unbind(strategy, properties);
    return inUse();
  }

  /** The strategy the manager uses: its name, or "built-in" for the manager's own get. */
  private String inUse() {
    return manager.builtInStrategy() ? "built-in" : manager.strategy();
  }

  @Test
  void theBestBoundStrategyIsUsedAndTheBuiltInGetWhenNoneIsLeft() {
    RecordingStrategy watch = new RecordingStrategy("watch", client, log);
    RecordingStrategy ttl = new RecordingStrategy("ttl", client, log);
    RecordingStrategy other = new RecordingStrategy("other", client, log);

    assertThat(List.of(
        bind(watch, properties("watch", 10, 0)),
        bind(ttl, properties("ttl", 11, 5)),
        bind(other, properties("other", 12, 5)),
        unbind(ttl, properties("ttl", 11, 5)),
        unbind(other, properties("other", 12, 5)),
        unbind(watch, properties("watch", 10, 0))))
        // equal ranking: the older service (lower id) wins, so binding "other" moves nothing
        .containsExactly("watch", "ttl", "ttl", "other", "watch", "built-in");
    assertThat(log).containsExactly("watch create secrets", "ttl create secrets", "watch close secrets",
        "other create secrets", "ttl close secrets", "watch create secrets", "other close secrets",
        "watch close secrets");
  }

  @Test
  void aStrategyThatFailsIsSkippedAndAGoneOneIsNotKept() {
    RecordingStrategy watch = new RecordingStrategy("watch", client, log);
    StoreStrategy broken = new StoreStrategy() {
      @Override
      public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
          ObjectStore.Listener<? super T> listener) {
        throw new IllegalStateException("closed");
      }
    };
    bindings.bind(watch, properties("watch", 1, 0));
    assertThat(bind(broken, properties("broken", 2, 10))).isEqualTo("watch");
    assertThat(unbind(watch, properties("watch", 1, 0))).isEqualTo("built-in");
  }

  @Test
  void anUpdatedStrategyInUseIsTakenAfreshAndOthersAreOrderedAgain() {
    RecordingStrategy watch = new RecordingStrategy("watch", client, log);
    RecordingStrategy ttl = new RecordingStrategy("ttl", client, log);
    bindings.bind(watch, properties("watch", 10, 0));
    bindings.bind(ttl, properties("ttl", 11, -1));
    log.clear();

    // the strategy in use took a new configuration: a fresh store of it replaces the old one
    bindings.update(watch, properties("watch", 10, 0));
    assertThat(manager.strategy()).isEqualTo("watch");
    assertThat(log).containsExactly("watch create secrets", "watch close secrets");
    log.clear();

    // another one changed without becoming the best: nothing moves
    bindings.update(ttl, properties("ttl", 11, -2));
    assertThat(log).isEmpty();
    // now it outranks the one in use
    bindings.update(ttl, properties("ttl", 11, 3));
    assertThat(manager.strategy()).isEqualTo("ttl");
    assertThat(log).containsExactly("ttl create secrets", "watch close secrets");
    log.clear();

    // an update of a service that is not bound (a late event) changes nothing
    bindings.update(new RecordingStrategy("stray", client, log), properties("stray", 99, 100));
    assertThat(manager.strategy()).isEqualTo("ttl");
    assertThat(log).isEmpty();
  }
}
