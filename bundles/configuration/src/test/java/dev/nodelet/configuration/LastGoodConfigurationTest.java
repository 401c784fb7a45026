package dev.nodelet.configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.junit.jupiter.api.Test;

/** Validate, refuse an invalid configuration with the validator's message, keep the last good one. */
class LastGoodConfigurationTest {

  private static Integer positive(String value) {
    try {
      int parsed = Integer.parseInt(value);
      if (parsed <= 0) {
        throw new IllegalArgumentException("size: must be positive, was " + parsed);
      }
      return parsed;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("size: not a number (" + value + ")");
    }
  }

  @Test
  void laterAnInvalidOneIsRefusedAndTheLastGoodStays() {
    LastGoodConfiguration<String, Integer> config = LastGoodConfiguration.waiting("pid", "the thing",
        LastGoodConfigurationTest::positive, new RecordingPublisher());
    List<Integer> applied = new ArrayList<>();
    assertThat(config.apply("3", Map.of(), applied::add)).isTrue();
    assertThat(config.current()).isEqualTo(3);
    assertThat(config.apply("zero", Map.of(), applied::add)).isFalse();
    assertThat(config.apply("0", Map.of(), applied::add)).isFalse();
    assertThat(config.current()).isEqualTo(3);
    assertThat(config.apply("3", Map.of(), applied::add)).as("unchanged").isFalse();
    assertThat(config.apply("5", Map.of(), applied::add)).isTrue();
    assertThat(config.current()).isEqualTo(5);
    assertThat(applied).containsExactly(3, 5);
  }

  @Test
  void aWaitingComponentHasNoSettings() {
    LastGoodConfiguration<String, Integer> config = LastGoodConfiguration.waiting("pid", "the thing",
        LastGoodConfigurationTest::positive, new RecordingPublisher());
    assertThat(config.settings()).isEmpty();
    assertThatThrownBy(config::current).isInstanceOf(IllegalStateException.class)
        .hasMessage("Configuration pid: the thing has no valid configuration yet");
  }

  @Test
  void anInvalidFirstConfigurationWaitsWithAHealthCheckAndPublishesNothingUntilAValidOne() {
    RecordingPublisher registry = new RecordingPublisher();
    Runnable service = () -> { };
    List<Integer> applied = new ArrayList<>();
    LastGoodConfiguration<String, Integer> config = LastGoodConfiguration.waiting("dev.nodelet.thing", "the thing",
        LastGoodConfigurationTest::positive, registry).publishing(service, Map.of("kind", "thing"), Runnable.class);

    assertThat(config.apply("-1", Map.of(), applied::add)).isFalse();
    assertThat(applied).isEmpty();
    assertThat(config.settings()).isEmpty();
    assertThat(config.problem()).contains("the thing waits for a valid configuration dev.nodelet.thing: size: must be"
        + " positive, was -1; correct it (etc/dev.nodelet.thing.cfg)");
    assertThat(registry.registered).doesNotContainKey(service);
    assertThat(registry.registered.get(registry.check())).containsEntry(HealthCheck.NAME, "dev.nodelet.thing");
    assertThat((String[]) registry.registered.get(registry.check()).get(HealthCheck.TAGS)).containsExactly("nodelet");
    Result waiting = registry.check().execute();
    assertThat(waiting.getStatus()).isEqualTo(Result.Status.CRITICAL);
    assertThat(waiting.iterator().next().getMessage()).contains("size: must be positive, was -1");

    assertThat(config.apply("zero", Map.of(), applied::add)).isFalse();
    assertThat(config.apply("zero", Map.of(), applied::add)).as("the same again").isFalse();
    assertThat(registry.history).as("one health check however often it is refused")
        .containsExactly("register [org.apache.felix.hc.api.HealthCheck]");
    assertThat(config.problem()).get().asString().contains("size: not a number (zero)");

    assertThat(config.apply("2", Map.of("size", 2, ".secret", "x"), applied::add)).isTrue();
    assertThat(applied).containsExactly(2);
    assertThat(config.current()).isEqualTo(2);
    assertThat(config.problem()).isEmpty();
    assertThat(registry.registered).containsOnlyKeys(service);
    assertThat(registry.registered.get(service)).isEqualTo(Map.of("size", 2, "kind", "thing"));

    assertThat(config.apply("-5", Map.of("size", -5), applied::add)).as("refused").isFalse();
    assertThat(config.current()).isEqualTo(2);
    assertThat(config.problem()).as("running on the last good one").isEmpty();
    assertThat(registry.registered).containsOnlyKeys(service);
    assertThat(registry.registered.get(service)).containsEntry("size", 2);

    assertThat(config.apply("2", Map.of("size", 2), applied::add)).as("unchanged").isFalse();
    assertThat(config.apply("3", Map.of("size", 3), applied::add)).isTrue();
    assertThat(applied).containsExactly(2, 3);
    assertThat(registry.registered.get(service)).containsEntry("size", 3);

    config.close();
    assertThat(registry.registered).isEmpty();
    assertThat(registry.history).containsExactly("register [org.apache.felix.hc.api.HealthCheck]",
        "unregister [org.apache.felix.hc.api.HealthCheck]", "register [java.lang.Runnable]",
        "update [java.lang.Runnable]", "unregister [java.lang.Runnable]");
  }

  @Test
  void whatTheChangeThrowsMakesTheComponentWaitUntilAConfigurationCanBeApplied() {
    RecordingPublisher registry = new RecordingPublisher();
    LastGoodConfiguration<String, Integer> config = LastGoodConfiguration.waiting("pid", "the thing",
        LastGoodConfigurationTest::positive, registry).publishing("service", Map.of(), CharSequence.class);
    assertThat(config.apply("4", Map.of(), n -> {
      throw new IllegalStateException("cannot listen on port 4: in use");
    })).isFalse();
    assertThat(config.settings()).isEmpty();
    assertThat(registry.health()).isEqualTo("CRITICAL the thing waits for a valid configuration pid: cannot listen"
        + " on port 4: in use; correct it (etc/pid.cfg)");
    assertThat(registry.registered).containsOnlyKeys(registry.check());

    assertThat(config.apply("5", Map.of(), n -> { })).isTrue();
    assertThat(registry.registered).containsOnlyKeys("service");
    assertThat(config.apply("4", Map.of(), n -> {
      throw new IllegalStateException("cannot listen on port 4: in use");
    })).as("a change that fails").isFalse();
    assertThat(config.settings()).as("not known to be in force").isEmpty();
    assertThat(registry.health()).contains("cannot listen on port 4");
    assertThat(config.apply("5", Map.of(), n -> { })).as("applied again").isTrue();
    assertThat(registry.healthCheck()).isEmpty();
  }
}
