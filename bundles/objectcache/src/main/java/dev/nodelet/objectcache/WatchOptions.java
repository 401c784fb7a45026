package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * What a {@link Watch} asks for, as the API server's watch parameters: where to start, whether to send the current
 * state first, bookmarks, a deadline, the buffer size, and a filter.
 *
 * <ul>
 *   <li>{@link #resourceVersion()}: unset or {@code "0"} starts at the cache's current state; a later version
 *       replays what changed after it (if the cache still remembers it, else {@link WatchExpiredException}). With
 *       {@link #sendInitialEvents()} it means "not older than": the initial events are the current state and the
 *       initial-events-end bookmark comes once the cache has reached this version.</li>
 *   <li>{@link #sendInitialEvents()}: first an {@code ADDED} event per object that passes the filter; with
 *       {@link #allowBookmarks()} then a bookmark annotated {@value WatchEvent#INITIAL_EVENTS_END_ANNOTATION}.</li>
 *   <li>{@link #allowBookmarks()}: periodic {@code BOOKMARK} events (about every minute, and 2 s before the
 *       deadline).</li>
 *   <li>{@link #deadline()}: the watch ends at this instant, like a watch request's timeout.</li>
 *   <li>{@link #bufferSize()}: events buffered for the watch before the consumer counts as not keeping up; 0 takes
 *       the cache's default.</li>
 *   <li>the filter: an object is in the watched set when it has every label of {@link #labels()}, every field of
 *       {@link #fields()} ({@code metadata.name}, {@code metadata.namespace}) and passes {@link #predicate()}. An
 *       object that enters the set is {@code ADDED}, one that leaves it is {@code DELETED}.</li>
 * </ul>
 *
 * @param <T> the Kubernetes type of the objects
 */
public final class WatchOptions<T extends HasMetadata> {

  /** The field selector on the object's name. */
  public static final String FIELD_NAME = "metadata.name";

  /** The field selector on the object's namespace. */
  public static final String FIELD_NAMESPACE = "metadata.namespace";

  private static final Set<String> FIELDS = Set.of(FIELD_NAME, FIELD_NAMESPACE);

  private final String resourceVersion;
  private final boolean sendInitialEvents;
  private final boolean allowBookmarks;
  private final Instant deadline;
  private final int bufferSize;
  private final Map<String, String> labels;
  private final Map<String, String> fields;
  private final Predicate<? super T> predicate;

  private WatchOptions(Builder<T> builder) {
    this.resourceVersion = builder.resourceVersion;
    this.sendInitialEvents = builder.sendInitialEvents;
    this.allowBookmarks = builder.allowBookmarks;
    this.deadline = builder.deadline;
    this.bufferSize = builder.bufferSize;
    this.labels = Map.copyOf(builder.labels);
    this.fields = Map.copyOf(builder.fields);
    this.predicate = builder.predicate;
  }

  /**
   * @param <T> the Kubernetes type of the objects
   * @return a builder of options that watch everything from now on, without bookmarks
   */
  public static <T extends HasMetadata> Builder<T> builder() {
    return new Builder<>();
  }

  /** @return the resource version to start at; empty for the current state */
  public Optional<String> resourceVersion() {
    return Optional.ofNullable(resourceVersion);
  }

  /** @return true to send the current state first */
  public boolean sendInitialEvents() {
    return sendInitialEvents;
  }

  /** @return true to receive bookmarks */
  public boolean allowBookmarks() {
    return allowBookmarks;
  }

  /** @return when the watch ends; empty for never */
  public Optional<Instant> deadline() {
    return Optional.ofNullable(deadline);
  }

  /** @return the buffer size; 0 for the cache's default */
  public int bufferSize() {
    return bufferSize;
  }

  /** @return the labels an object must have, with these values */
  public Map<String, String> labels() {
    return labels;
  }

  /** @return the fields an object must have, with these values */
  public Map<String, String> fields() {
    return fields;
  }

  /** @return the predicate an object must pass; accepts everything unless set */
  public Predicate<? super T> predicate() {
    return predicate;
  }

  /**
   * @param object an object
   * @return true if the object is in the watched set: it has the labels and fields and passes the predicate
   */
  public boolean matches(T object) {
    ObjectMeta metadata = object.getMetadata();
    Map<String, String> objectLabels = metadata == null || metadata.getLabels() == null
        ? Map.of() : metadata.getLabels();
    for (Map.Entry<String, String> label : labels.entrySet()) {
      if (!label.getValue().equals(objectLabels.get(label.getKey()))) {
        return false;
      }
    }
    for (Map.Entry<String, String> field : fields.entrySet()) {
      String value = metadata == null ? null
          : FIELD_NAME.equals(field.getKey()) ? metadata.getName() : metadata.getNamespace();
      if (!field.getValue().equals(value)) {
        return false;
      }
    }
    return predicate.test(object);
  }

  /**
   * Builds {@link WatchOptions}.
   *
   * @param <T> the Kubernetes type of the objects
   */
  public static final class Builder<T extends HasMetadata> {
    private String resourceVersion;
    private boolean sendInitialEvents;
    private boolean allowBookmarks;
    private Instant deadline;
    private int bufferSize;
    private final Map<String, String> labels = new LinkedHashMap<>();
    private final Map<String, String> fields = new LinkedHashMap<>();
    private Predicate<? super T> predicate = object -> true;

    private Builder() {
    }

    /**
     * @param resourceVersion where to start; {@code null}, empty or {@code "0"} for the current state
     * @return this builder
     */
    public Builder<T> resourceVersion(String resourceVersion) {
      this.resourceVersion = resourceVersion == null || resourceVersion.isEmpty() ? null : resourceVersion;
      return this;
    }

    /**
     * @param sendInitialEvents true to send the current state first
     * @return this builder
     */
    public Builder<T> sendInitialEvents(boolean sendInitialEvents) {
      this.sendInitialEvents = sendInitialEvents;
      return this;
    }

    /**
     * @param allowBookmarks true to receive bookmarks
     * @return this builder
     */
    public Builder<T> allowBookmarks(boolean allowBookmarks) {
      this.allowBookmarks = allowBookmarks;
      return this;
    }

    /**
     * @param deadline when the watch ends; {@code null} for never
     * @return this builder
     */
    public Builder<T> deadline(Instant deadline) {
      this.deadline = deadline;
      return this;
    }

    /**
     * @param bufferSize the number of events buffered for the watch; 0 for the cache's default
     * @return this builder
     * @throws IllegalArgumentException if negative
     */
    public Builder<T> bufferSize(int bufferSize) {
      if (bufferSize < 0) {
        throw new IllegalArgumentException("bufferSize must not be negative: " + bufferSize);
      }
      this.bufferSize = bufferSize;
      return this;
    }

    /**
     * @param key a label an object must have
     * @param value the value it must have
     * @return this builder
     */
    public Builder<T> label(String key, String value) {
      labels.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
      return this;
    }

    /**
     * @param field {@value #FIELD_NAME} or {@value #FIELD_NAMESPACE}
     * @param value the value it must have
     * @return this builder
     * @throws IllegalArgumentException if the field is not supported
     */
    public Builder<T> field(String field, String value) {
      if (!FIELDS.contains(field)) {
        throw new IllegalArgumentException("unsupported field selector: " + field
            + " (supported: " + FIELD_NAME + ", " + FIELD_NAMESPACE + ")");
      }
      fields.put(field, Objects.requireNonNull(value, "value"));
      return this;
    }

    /**
     * @param predicate a test an object must pass, in addition to labels and fields; it must not block
     * @return this builder
     */
    public Builder<T> predicate(Predicate<? super T> predicate) {
      this.predicate = Objects.requireNonNull(predicate, "predicate");
      return this;
    }

    /** @return the options */
    public WatchOptions<T> build() {
      return new WatchOptions<>(this);
    }
  }
}
