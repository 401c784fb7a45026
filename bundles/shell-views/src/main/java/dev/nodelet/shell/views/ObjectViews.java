package dev.nodelet.shell.views;

import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.ObjectReceipt;
import dev.nodelet.objectcache.PodReceipt;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.objectcache.WatchStatistics;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The text that shells show of {@link ObjectManager}s: the one place that decides what a listing contains and how a
 * Secret is redacted, so that every shell (the Gogo commands of {@code nodelet-gogo-shell}, the Karaf commands of
 * {@code nodelet-karaf-shell}) shows the same and none shows Secret data by accident. Both bundles carry a private
 * copy of this package (bnd {@code -conditionalpackage}).
 *
 * <p>Listings take the managers in any order and list them by plural resource name.
 */
public final class ObjectViews {

  /** The name of the strategy a manager answers with by itself. */
  private static final String BUILT_IN = "get";

  /** What a shown Secret carries instead of the value of a data key; the argument is the value's size in bytes. */
  public static final String REDACTED = "<redacted, %d bytes>";

  /** kubectl keeps the whole applied object, Secret data included, in this annotation. */
  private static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

  /** Strategy names go into an LDAP filter: no filter syntax may pass. */
  private static final Pattern STRATEGY_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");

  private ObjectViews() {
  }

  /**
   * The plural resource name a user means: {@code cm} and {@code configmap} mean {@code configmaps}, {@code secret}
   * means {@code secrets}; anything else is taken as a plural name, lower case.
   *
   * @param kind what the user typed
   * @return the plural resource name
   */
  public static String plural(String kind) {
    return switch (kind.toLowerCase()) {
      case "cm", "configmap" -> "configmaps";
      case "secret" -> "secrets";
      default -> kind.toLowerCase();
    };
  }

  /**
   * The manager of the resource a user means, by {@link #plural(String)}.
   *
   * @param <M> the type of the managers
   * @param managers the managers to choose from
   * @param kind what the user typed
   * @return the manager
   * @throws IllegalArgumentException naming the available resources, if none matches
   */
  public static <M extends ObjectManager<?>> M manager(Collection<M> managers, String kind) {
    String plural = plural(kind);
    return sorted(managers).stream().filter(m -> m.type().plural().equals(plural)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no manager of " + kind + "; available: "
            + String.join(", ", sorted(managers).stream().map(m -> m.type().plural()).toList())));
  }

  /**
   * @param managers the managers
   * @return a table of every registered pod and the objects it references, per manager
   */
  public static String pods(Collection<? extends ObjectManager<?>> managers) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"RESOURCE", "NAMESPACE", "POD", "UID", "REFERENCES"});
    for (ObjectManager<?> manager : sorted(managers)) {
      for (RegisteredPod pod : manager.registeredPods()) {
        rows.add(new String[] {manager.type().plural(), pod.namespace(), pod.name(), pod.uid(),
            String.join(",", pod.references())});
      }
    }
    return table(rows);
  }

  /**
   * @param managers the managers
   * @return a table of what every registered pod is served: per referenced object its UID, resource version, when
   *     it last changed on the API server, when Nodelet saw that version, and whether it may be stale (and why).
   *     Never object content.
   */
  public static String receipts(Collection<? extends ObjectManager<?>> managers) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"NAMESPACE", "POD", "RESOURCE", "NAME", "UID", "VERSION", "CHANGED", "SEEN", "STALE"});
    for (ObjectManager<?> manager : sorted(managers)) {
      for (PodReceipt pod : manager.receipts()) {
        for (ObjectReceipt object : pod.objects()) {
          rows.add(new String[] {pod.namespace(), pod.name(), object.resource(), object.name(),
              object.uid().orElse("-"), object.resourceVersion().orElse("-"),
              object.lastChanged().map(Object::toString).orElse("-"),
              object.seen().map(Object::toString).orElse("-"),
              object.staleReason().map(reason -> "yes: " + reason).orElse("no")});
        }
      }
    }
    return table(rows);
  }

  /**
   * @param managers the managers
   * @return a table of every referenced object with its strategy, state, reference count and last access
   */
  public static String objects(Collection<? extends ObjectManager<?>> managers) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"RESOURCE", "NAMESPACE", "NAME", "STRATEGY", "STATE", "REFERENCES", "LAST-ACCESS"});
    for (ObjectManager<?> manager : sorted(managers)) {
      boolean builtIn = manager.builtInStrategy();
      for (CachedObject object : manager.objects()) {
        rows.add(new String[] {manager.type().plural(), object.namespace(), object.name(),
            label(object.strategy(), builtIn),
            object.state().map(s -> s.name().toLowerCase()).orElse("-"), Integer.toString(object.references()),
            object.lastAccess().map(Object::toString).orElse("never")});
      }
    }
    return table(rows);
  }

  /**
   * @param managers the managers
   * @return one line {@code <plural>: <strategy>} per manager (see {@link #strategy})
   */
  public static String strategies(Collection<? extends ObjectManager<?>> managers) {
    StringBuilder out = new StringBuilder();
    for (ObjectManager<?> manager : sorted(managers)) {
      out.append(manager.type().plural()).append(": ").append(strategy(manager)).append('\n');
    }
    return out.toString();
  }

  /**
   * @param manager a manager
   * @return the name of the strategy it uses; {@code get (built-in)} while it answers by itself
   */
  public static String strategy(ObjectManager<?> manager) {
    return label(manager.strategy(), manager.builtInStrategy());
  }

  /**
   * The two reads are apart and the manager may move between them: only the built-in's own name is marked, so that a
   * move shows one strategy or the other, never another strategy marked built-in.
   */
  private static String label(String name, boolean builtIn) {
    return builtIn && BUILT_IN.equals(name) ? name + " (built-in)" : name;
  }

  /**
   * @param managers the managers
   * @return a table of open watches, watches closed for not keeping up and initial events, per manager
   */
  public static String watchStatistics(Collection<? extends ObjectManager<?>> managers) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"RESOURCE", "WATCHERS", "TERMINATED", "INITIAL-EVENTS", "QUEUED", "LONGEST-QUEUE"});
    for (ObjectManager<?> manager : sorted(managers)) {
      WatchStatistics statistics = manager.watchStatistics();
      rows.add(new String[] {manager.type().plural(), Integer.toString(statistics.watchers()),
          Long.toString(statistics.terminatedWatchers()), Long.toString(statistics.initialEvents()),
          Long.toString(statistics.queuedEvents()), Integer.toString(statistics.longestQueue())});
    }
    return table(rows);
  }

  /**
   * The {@code strategy.target} filter that makes a manager use a strategy.
   *
   * @param strategy a strategy name such as {@code get}, {@code ttl} or {@code watch}
   * @return the filter {@code (nodelet.strategy=<strategy>)}
   * @throws IllegalArgumentException if the name holds anything but letters, digits, '.', '_' and '-'
   */
  public static String strategyTarget(String strategy) {
    if (!STRATEGY_NAME.matcher(strategy).matches()) {
      throw new IllegalArgumentException("invalid strategy name " + strategy
          + ": letters, digits, '.', '_' and '-' only");
    }
    return "(" + StoreStrategy.PROPERTY + "=" + strategy + ")";
  }

  /**
   * An object as YAML.
   *
   * @param serialization the serializer to use
   * @param object the object
   * @param showSecret whether a Secret is shown with its data; if not, it is shown {@link #redacted(Secret)}
   * @return the YAML text
   */
  public static String yaml(KubernetesSerialization serialization, HasMetadata object, boolean showSecret) {
    if (object instanceof Secret secret && !showSecret) {
      return serialization.asYaml(redacted(secret));
    }
    return serialization.asYaml(object);
  }

  /**
   * A copy of a Secret that names the data keys and the sizes of their values but holds no secret value: the
   * metadata is reduced to identity, labels and annotations, and kubectl's last-applied annotation is redacted too.
   *
   * @param secret the Secret
   * @return the redacted copy
   */
  public static Secret redacted(Secret secret) {
    Map<String, String> data = new LinkedHashMap<>();
    if (secret.getData() != null) {
      secret.getData().forEach((key, value) -> data.put(key,
          String.format(REDACTED, value == null ? 0 : Base64.getMimeDecoder().decode(value).length)));
    }
    if (secret.getStringData() != null) {
      secret.getStringData().forEach((key, value) -> data.put(key, String.format(REDACTED,
          value == null ? 0 : value.getBytes(StandardCharsets.UTF_8).length)));
    }
    ObjectMeta metadata = secret.getMetadata();
    Map<String, String> annotations = metadata == null || metadata.getAnnotations() == null
        ? null : new LinkedHashMap<>(metadata.getAnnotations());
    if (annotations != null && annotations.containsKey(LAST_APPLIED)) {
      annotations.put(LAST_APPLIED, "<redacted>");
    }
    ObjectMeta shown = metadata == null ? null : new ObjectMetaBuilder()
        .withNamespace(metadata.getNamespace()).withName(metadata.getName()).withUid(metadata.getUid())
        .withResourceVersion(metadata.getResourceVersion()).withCreationTimestamp(metadata.getCreationTimestamp())
        .withLabels(metadata.getLabels()).withAnnotations(annotations).build();
    return new SecretBuilder().withApiVersion(secret.getApiVersion()).withKind(secret.getKind())
        .withMetadata(shown).withType(secret.getType()).withImmutable(secret.getImmutable()).withData(data)
        .build();
  }

  private static <M extends ObjectManager<?>> List<M> sorted(Collection<M> managers) {
    Function<M, String> plural = m -> m.type().plural();
    return managers.stream().sorted(Comparator.comparing(plural)).toList();
  }

  /** Columns padded to the widest cell, two spaces apart; the last column is not padded. */
  static String table(List<String[]> rows) {
    StringBuilder out = new StringBuilder();
    int[] widths = new int[rows.get(0).length];
    for (String[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    for (String[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        out.append(i == row.length - 1 ? row[i] : String.format("%-" + (widths[i] + 2) + "s", row[i]));
      }
      out.append('\n');
    }
    return out.toString();
  }
}
