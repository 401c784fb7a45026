package dev.nodelet.configuration;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.osgi.util.converter.Converters;

/** A misspelt key gets one warning naming the PID, the key and the nearest known key. */
class ConfigurationKeysTest {

  /** The shape of a strategy's configuration. */
  @ObjectClassDefinition(name = "watch")
  @interface WatchConfig {
    @AttributeDefinition(name = "resync")
    long resync_interval_seconds() default 60;

    @AttributeDefinition(name = "sync wait")
    long sync_wait_millis() default 1000;

    @AttributeDefinition(name = "budget")
    int max_watches() default 0;
  }

  /** The shape of a manager's configuration, whose one key is a reference's target. */
  @ObjectClassDefinition(name = "manager")
  @interface ManagerConfig {
    String strategy_target() default "(nodelet.strategy=watch)";
  }

  @interface Naming {
    String PREFIX_ = "p.";

    String my$$key();

    String dash$_$key();

    String under__score_dot();

    String lone$dollar();
  }

  @interface SingleElement {
    String value();
  }

  /** What Declarative Services gives a component of {@code pid} configured from a file with {@code configured}. */
  private static Map<String, Object> properties(String pid, Map<String, Object> configured) {
    Map<String, Object> properties = new HashMap<>(configured);
    properties.put("service.pid", pid);
    properties.put("felix.fileinstall.filename", "file:/node/etc/" + pid + ".cfg");
    properties.put("component.name", "dev.nodelet.Component");
    properties.put("component.id", 7L);
    properties.put("kubernetesClient.target", "(name=x)");
    return properties;
  }

  @Test
  void keysFollowTheNamingRulesOfDeclarativeServices() {
    assertThat(ConfigurationKeys.keysOf(WatchConfig.class))
        .containsExactlyInAnyOrder("resync.interval.seconds", "sync.wait.millis", "max.watches");
    assertThat(ConfigurationKeys.keysOf(Naming.class))
        .containsExactlyInAnyOrder("p.my$key", "p.dash-key", "p.under_score.dot", "p.lonedollar");
    assertThat(ConfigurationKeys.keysOf(SingleElement.class)).containsExactly("single.element");
  }

  @Test
  void aMisspeltKeyOfARealConfigurationIsNamedOnceWithTheNearestKey() {
    Map<String, Object> configured = Map.of("resync.intervall.seconds", "5", "max.watches", "10");
    WatchConfig config = Converters.standardConverter().convert(configured).to(WatchConfig.class);
    List<Long> applied = new ArrayList<>();
    LastGoodConfiguration<WatchConfig, Long> configuration = LastGoodConfiguration.waiting(
        "dev.nodelet.store.watch", "the watch store strategy", WatchConfig::resync_interval_seconds,
        new RecordingPublisher());

    assertThat(configuration.apply(config, properties("dev.nodelet.store.watch", configured), applied::add))
        .isTrue();
    assertThat(applied).as("the misspelt key is ignored: the default stays").containsExactly(60L);
    assertThat(configuration.unknownKeys()).containsExactly("Configuration dev.nodelet.store.watch: unknown key "
        + "resync.intervall.seconds is ignored; did you mean resync.interval.seconds? "
        + "(etc/dev.nodelet.store.watch.cfg)");

    Map<String, Object> touched = Map.of("resync.intervall.seconds", "5", "max.watches", "11");
    configuration.apply(Converters.standardConverter().convert(touched).to(WatchConfig.class),
        properties("dev.nodelet.store.watch", touched), applied::add);
    assertThat(configuration.unknownKeys()).as("once per key").hasSize(1);
  }

  @Test
  void aMisspeltReferenceTargetIsNamedWithTheTarget() {
    ConfigurationKeys keys = ConfigurationKeys.of("dev.nodelet.configmap", ManagerConfig.class);
    assertThat(keys.check(properties("dev.nodelet.configmap", Map.of("strategy.targt", "(nodelet.strategy=ttl)"))))
        .containsExactly("Configuration dev.nodelet.configmap: unknown key strategy.targt is ignored; did you mean "
            + "strategy.target? (etc/dev.nodelet.configmap.cfg)");
    assertThat(keys.check(properties("dev.nodelet.configmap", Map.of("strategy.targt", "(nodelet.strategy=get)"))))
        .as("said once").isEmpty();
  }

  @Test
  void aKeyNothingResemblesListsTheKnownKeys() {
    ConfigurationKeys keys = ConfigurationKeys.of("dev.nodelet.driver.example~gpu", WatchConfig.class);
    assertThat(keys.check(Map.of("colour", "blue")))
        .containsExactly("Configuration dev.nodelet.driver.example~gpu: unknown key colour is ignored; known keys: "
            + "max.watches, resync.interval.seconds, sync.wait.millis (etc/dev.nodelet.driver.example-gpu.cfg)");
  }

  @Test
  void theFrameworksOwnKeysAndKnownOnesPassSilently() {
    ConfigurationKeys keys = ConfigurationKeys.of("dev.nodelet.store.watch", WatchConfig.class, "nodelet.resource");
    Map<String, Object> properties = properties("dev.nodelet.store.watch", Map.of("max.watches", 1,
        "sync.wait.millis", 5, "nodelet.resource", "configmaps", "service.factoryPid", "f",
        "service.bundleLocation", "?", "org.apache.karaf.features.configKey", "k", ".private", "x"));
    assertThat(keys.check(properties)).isEmpty();
  }

  @Test
  void nearestTakesTheClosestAndNothingFar() {
    List<String> known = List.of("resync.interval.seconds", "sync.wait.millis", "max.watches");
    assertThat(ConfigurationKeys.nearest("max.wacthes", known)).contains("max.watches");
    assertThat(ConfigurationKeys.nearest("resync_interval_seconds", known)).contains("resync.interval.seconds");
    assertThat(ConfigurationKeys.nearest("Sync.Wait.Millis", known)).contains("sync.wait.millis");
    assertThat(ConfigurationKeys.nearest("port", known)).isEmpty();
  }
}
