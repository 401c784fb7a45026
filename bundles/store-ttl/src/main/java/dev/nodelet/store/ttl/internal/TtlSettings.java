package dev.nodelet.store.ttl.internal;

import static dev.nodelet.configuration.ConfigurationValues.within;

import dev.nodelet.persistence.PersistenceConfig;
import dev.nodelet.store.ttl.TtlStoreStrategy;
import java.util.Optional;

/**
 * A validated configuration of {@value TtlStrategyComponent#PID}.
 *
 * @param defaultTtlSeconds {@code default.ttl.seconds}
 * @param useNodeAnnotation {@code use.node.ttl.annotation}
 * @param persistence the {@code persistence.*} keys, if {@code persistence.dir} is set
 */
record TtlSettings(long defaultTtlSeconds, boolean useNodeAnnotation, Optional<PersistenceConfig> persistence) {

  static final String DEFAULT_TTL = "default.ttl.seconds";
  static final long MAX_TTL_SECONDS = TtlStoreStrategy.MAX_TTL.getSeconds();

  /**
   * @throws IllegalArgumentException naming the key that is wrong and why
   */
  static TtlSettings from(TtlStrategyConfiguration config) {
    long ttl = within(DEFAULT_TTL, config::default_ttl_seconds, 0, MAX_TTL_SECONDS, "seconds");
    return new TtlSettings(ttl, config.use_node_ttl_annotation(), PersistenceConfig.from(config.persistence_dir(),
        config.persistence_key_file(), config.persistence_encrypt_configmaps(), config::persistence_max_bytes,
        config::persistence_restored_grace_seconds));
  }

  @Override
  public String toString() {
    return DEFAULT_TTL + "=" + defaultTtlSeconds + ", use.node.ttl.annotation=" + useNodeAnnotation
        + persistence.map(p -> ", " + p).orElse("");
  }
}
