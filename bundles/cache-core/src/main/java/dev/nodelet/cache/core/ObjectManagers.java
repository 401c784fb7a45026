package dev.nodelet.cache.core;

import dev.nodelet.cache.core.internal.StrategySwitchingManager;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.ResourceType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * Builds {@link ObjectManager}s for plain Java programs and tests; the {@code nodelet-managers} bundle registers
 * managers built here as services.
 */
public final class ObjectManagers {

  private ObjectManagers() {
  }

  /**
   * Starts building a manager of ConfigMaps that finds the names of {@link ReferencedNames#configMaps}.
   *
   * @param client the client of the built-in {@code get} strategy; not closed by the manager
   * @return a builder
   */
  public static Builder<ConfigMap> configMaps(KubernetesClient client) {
    return new Builder<>(client, ResourceType.CONFIG_MAPS, ReferencedNames::configMaps);
  }

  /**
   * Starts building a manager of Secrets that finds the names of {@link ReferencedNames#secrets}.
   *
   * @param client the client of the built-in {@code get} strategy; not closed by the manager
   * @return a builder
   */
  public static Builder<Secret> secrets(KubernetesClient client) {
    return new Builder<>(client, ResourceType.SECRETS, ReferencedNames::secrets);
  }

  /**
   * Starts building a manager of any namespaced type.
   *
   * @param client the client of the built-in {@code get} strategy; not closed by the manager
   * @param type the type of the objects
   * @param referencedNames the names of the objects a pod references, each once
   * @param <T> the Kubernetes type of the objects
   * @return a builder
   */
  public static <T extends HasMetadata> Builder<T> builder(KubernetesClient client, ResourceType<T> type,
      Function<Pod, Set<String>> referencedNames) {
    return new Builder<>(client, type, referencedNames);
  }

  /**
   * Options of a manager.
   *
   * @param <T> the Kubernetes type of the objects
   */
  public static final class Builder<T extends HasMetadata> {
    private final KubernetesClient client;
    private final ResourceType<T> type;
    private final Function<Pod, Set<String>> referencedNames;
    private Clock clock = Clock.systemUTC();
    private boolean manualTicks;
    private ManagerMetrics metrics;

    private Builder(KubernetesClient client, ResourceType<T> type, Function<Pod, Set<String>> referencedNames) {
      this.client = Objects.requireNonNull(client, "client");
      this.type = Objects.requireNonNull(type, "type");
      this.referencedNames = Objects.requireNonNull(referencedNames, "referencedNames");
    }

    /**
     * @param clock the clock of the last access times and of watch bookmarks and deadlines; the system UTC clock by
     *     default
     * @return this builder
     */
    public Builder<T> clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * The manager runs no timer thread for its watches: bookmarks and deadlines are judged only when the owner calls
     * {@link SwitchableObjectManager#tick()}. For tests that drive time with their own clock.
     *
     * @return this builder
     */
    public Builder<T> manualTicks() {
      this.manualTicks = true;
      return this;
    }

    /**
     * @param metrics where the manager reports what it keeps and times its gets, until it is closed; none by default
     * @return this builder
     * @since 1.1
     */
    public Builder<T> metrics(ManagerMetrics metrics) {
      this.metrics = Objects.requireNonNull(metrics, "metrics");
      return this;
    }

    /**
     * @return a new manager that answers with the built-in {@code get} strategy until it is given another; unless
     *     {@link #manualTicks()}, it runs one timer thread for its watches (bookmarks, deadlines), so close it when
     *     done
     */
    public SwitchableObjectManager<T> build() {
      return new StrategySwitchingManager<>(type, referencedNames, clock, new GetStrategy(client, clock),
          manualTicks, metrics == null ? null : metrics.instruments());
    }
  }
}
