package dev.nodelet.store.watch.internal;

import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.configuration.ServicePublisher;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.kube.watch.Reflectors;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.osgi.util.converter.Converters;

/**
 * What Declarative Services hands the watch strategy's component, for each test ({@code @RegisterExtension}): an
 * embedded API server's client, the reflector engine {@code nodelet-kube} registers beside it (built on first use,
 * closed before the client and the server, so no watch and no engine thread is left), and the node.
 */
final class WatchComponentExtension implements BeforeEachCallback, AfterEachCallback {

  private final ApiServerExtension api = new ApiServerExtension();
  private ReflectorEngine engine;

  @Override
  public void beforeEach(ExtensionContext context) {
    api.beforeEach(context);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    try {
      closeReflectors();
    } finally {
      api.afterEach(context);
    }
  }

  /** @return the API server and its client */
  ApiServerExtension api() {
    return api;
  }

  synchronized Reflectors reflectors() {
    if (engine == null) {
      engine = ReflectorEngine.builder(api.client()).build();
    }
    return engine;
  }

  private synchronized void closeReflectors() {
    if (engine != null) {
      engine.close();
      engine = null;
    }
  }

  /** The configuration Declarative Services would convert these properties to. */
  static WatchStrategyConfiguration config(Map<String, Object> properties) {
    return Converters.standardConverter().convert(properties).to(WatchStrategyConfiguration.class);
  }

  /** Activates the component with these configuration properties, registering through a recording publisher. */
  WatchStrategyComponent activate(Map<String, Object> properties) {
    return activate(new RecordingPublisher(), properties);
  }

  /**
   * @return what a component activated with these invalid configuration properties says it waits for, on its
   *     health check
   */
  String waits(Map<String, Object> properties) {
    return RecordingPublisher.waits(publisher -> activate(publisher, properties), WatchStrategyComponent::deactivate);
  }

  /** Activates the component with these configuration properties, registering through {@code publisher}. */
  WatchStrategyComponent activate(ServicePublisher publisher, Map<String, Object> properties) {
    return new WatchStrategyComponent(publisher, api.client(), reflectors(), new TestNode(), config(properties),
        properties);
  }
}
