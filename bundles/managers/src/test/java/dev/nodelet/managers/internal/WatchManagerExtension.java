package dev.nodelet.managers.internal;

import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.store.watch.WatchStoreStrategy;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A manager component bound to the watch strategy over an embedded API server, wired for each test as Declarative
 * Services would ({@code @RegisterExtension}); deactivated, with the strategy and the server closed, after the test.
 */
final class WatchManagerExtension<C extends ManagerComponent<?>> implements BeforeEachCallback, AfterEachCallback {

  /** A component's {@code @Activate} constructor. */
  interface Factory<C> {
    C create(KubernetesClient client, ManagerMetricsService metrics, ManagerConfiguration config);
  }

  private final ApiServerExtension api = new ApiServerExtension();
  private final Factory<C> factory;
  private WatchStoreStrategy watch;
  private C component;

  WatchManagerExtension(Factory<C> factory) {
    this.factory = factory;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    api.beforeEach(context);
    watch = WatchStoreStrategy.builder(api.client()).build();
    component = factory.create(api.client(), new ManagerMetricsService(), Defaults.configuration());
    component.addStrategy(watch, Defaults.strategy("watch", 1));
  }

  @Override
  public void afterEach(ExtensionContext context) {
    try {
      component.deactivate();
      watch.close();
    } finally {
      api.afterEach(context);
    }
  }

  /** @return the API server and its client */
  ApiServerExtension api() {
    return api;
  }

  /** @return the component of the running test */
  C component() {
    return component;
  }
}
