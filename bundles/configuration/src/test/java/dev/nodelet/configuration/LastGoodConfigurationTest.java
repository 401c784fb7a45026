package dev.nodelet.configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
  void anInvalidConfigurationAtActivationFailsItWithTheValidatorsMessage() {
    assertThatThrownBy(() -> LastGoodConfiguration.activate("pid", "the thing", "-1",
        LastGoodConfigurationTest::positive))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("size: must be positive, was -1");
  }

  @Test
  void laterAnInvalidOneIsRefusedAndTheLastGoodStays() {
    LastGoodConfiguration<String, Integer> config = LastGoodConfiguration.activate("pid", "the thing", "3",
        LastGoodConfigurationTest::positive);
    assertThat(config.current()).isEqualTo(3);
    assertThat(config.offer("zero")).isEmpty();
    assertThat(config.offer("0")).isEmpty();
    assertThat(config.current()).isEqualTo(3);
    assertThat(config.offer("3")).as("unchanged").isEmpty();
    assertThat(config.offer("5")).contains(5);
    assertThat(config.current()).isEqualTo(5);
  }

  @Test
  void aWaitingComponentTakesItsFirstValidConfigurationThroughOffer() {
    LastGoodConfiguration<String, Integer> config = LastGoodConfiguration.waiting("pid", "the thing",
        LastGoodConfigurationTest::positive);
    assertThat(config.settings()).isEmpty();
    assertThatThrownBy(config::current).isInstanceOf(IllegalStateException.class)
        .hasMessage("Configuration pid: the thing has no valid configuration yet");
    assertThat(config.offer("-1")).isEmpty();
    assertThat(config.settings()).isEmpty();
    assertThat(config.offer("2")).contains(2);
    assertThat(config.offer("-1")).isEmpty();
    assertThat(config.settings()).contains(2);
  }
}
