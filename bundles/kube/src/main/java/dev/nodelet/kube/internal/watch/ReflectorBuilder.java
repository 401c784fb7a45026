package dev.nodelet.kube.internal.watch;

import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorListener;
import io.fabric8.kubernetes.api.model.HasMetadata;

/** Collects the options of one reflector; the engine validates and starts it. */
final class ReflectorBuilder<T extends HasMetadata> implements Reflector.Builder<T> {

  private final Engine engine;
  private final Class<T> type;
  private String namespace;
  private String fieldSelector;
  private String labelSelector;
  private ReflectorListener<T> listener;

  ReflectorBuilder(Engine engine, Class<T> type) {
    this.engine = engine;
    this.type = type;
  }

  @Override
  public Reflector.Builder<T> namespace(String namespace) {
    this.namespace = nonBlank("namespace", namespace);
    return this;
  }

  @Override
  public Reflector.Builder<T> fieldSelector(String fieldSelector) {
    this.fieldSelector = nonBlank("fieldSelector", fieldSelector);
    return this;
  }

  @Override
  public Reflector.Builder<T> labelSelector(String labelSelector) {
    this.labelSelector = nonBlank("labelSelector", labelSelector);
    return this;
  }

  @Override
  public Reflector.Builder<T> listener(ReflectorListener<T> listener) {
    if (listener == null) {
      throw new IllegalArgumentException("listener must not be null");
    }
    this.listener = listener;
    return this;
  }

  @Override
  public Reflector<T> start() {
    if (listener == null) {
      throw new IllegalArgumentException("a reflector of " + type.getSimpleName() + " needs a listener: call "
          + "listener(...) before start()");
    }
    return engine.start(type, namespace, fieldSelector, labelSelector, listener);
  }

  private static String nonBlank(String option, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(option + " must not be empty; leave it unset to select everything");
    }
    return value;
  }
}
