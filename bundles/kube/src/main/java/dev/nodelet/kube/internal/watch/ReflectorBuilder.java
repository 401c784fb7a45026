package dev.nodelet.kube.internal.watch;

import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorListener;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.Collection;
import java.util.List;

/** Collects the options of one reflector; the engine validates and starts it. */
final class ReflectorBuilder<T extends HasMetadata> implements Reflector.Builder<T> {

  private final Engine engine;
  private final Class<T> type;
  private String namespace;
  private String fieldSelector;
  private String labelSelector;
  private ReflectorListener<T> listener;
  private String resumeVersion;
  private List<T> resumeObjects = List.of();

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
  public Reflector.Builder<T> resumeFrom(String resourceVersion, Collection<? extends T> objects) {
    this.resumeVersion = nonBlank("resumeFrom's resourceVersion", resourceVersion);
    if (objects == null) {
      throw new IllegalArgumentException("resumeFrom's objects must not be null; pass an empty list if there were "
          + "none");
    }
    for (T object : objects) {
      if (object == null || object.getMetadata() == null || object.getMetadata().getName() == null) {
        throw new IllegalArgumentException("resumeFrom's objects must each have metadata with a name, got " + object);
      }
    }
    this.resumeObjects = List.copyOf(objects);
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
    return engine.start(type, namespace, fieldSelector, labelSelector, listener, resumeVersion, resumeObjects);
  }

  private static String nonBlank(String option, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(option + " must not be empty; leave it unset to select everything");
    }
    return value;
  }
}
