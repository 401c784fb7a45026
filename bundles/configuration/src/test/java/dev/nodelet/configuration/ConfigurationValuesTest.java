package dev.nodelet.configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ConfigurationValuesTest {

  @Test
  void aValueInTheRangeIsReturned() {
    assertThat(ConfigurationValues.within("a.seconds", () -> 1, 1, 10, "seconds")).isEqualTo(1);
    assertThat(ConfigurationValues.within("a.count", () -> 10, 1, 10, "")).isEqualTo(10);
  }

  @Test
  void aValueOutsideTheRangeIsRefusedNamingKeyRangeAndValue() {
    assertThatThrownBy(() -> ConfigurationValues.within("a.seconds", () -> 0, 1, 10, "seconds"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a.seconds: must be between 1 and 10 seconds, was 0");
    assertThatThrownBy(() -> ConfigurationValues.within("a.count", () -> 11, 1, 10, ""))
        .hasMessage("a.count: must be between 1 and 10, was 11");
  }

  @Test
  void aValueThatDoesNotConvertIsRefusedNamingTheKey() {
    assertThatThrownBy(() -> ConfigurationValues.within("a.seconds", () -> {
      throw new NumberFormatException("For input string: \"ten\"");
    }, 1, 10, "seconds"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a.seconds: not a whole number of seconds (For input string: \"ten\")");
  }

  @Test
  void aPathMustBeGivenAndValid() {
    assertThat(ConfigurationValues.path("state.directory", " /var/lib/x ")).isEqualTo(Path.of("/var/lib/x"));
    assertThatThrownBy(() -> ConfigurationValues.path("state.directory", " "))
        .hasMessage("state.directory: must not be empty");
    assertThatThrownBy(() -> ConfigurationValues.path("state.directory", null))
        .hasMessage("state.directory: must not be empty");
    assertThatThrownBy(() -> ConfigurationValues.path("state.directory", "a\u0000b"))
        .hasMessageStartingWith("state.directory: not a path (");
  }
}
