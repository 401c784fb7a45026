package dev.nodelet.kube.internal.watch;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class EngineSettingsTest {

  @Test
  void eachBadOptionIsNamed() {
    assertThatThrownBy(() -> EngineSettings.builder().restartRate(0).build())
        .hasMessageContaining("restart rate must be a positive number");
    assertThatThrownBy(() -> EngineSettings.builder().restartRate(Double.NaN).build())
        .hasMessageContaining("restart rate");
    assertThatThrownBy(() -> EngineSettings.builder().restartBurst(0).build())
        .hasMessageContaining("restart burst must be at least 1, got 0");
    assertThatThrownBy(() -> EngineSettings.builder().backoff(Duration.ZERO, Duration.ofSeconds(1)).build())
        .hasMessageContaining("initial backoff must be positive");
    assertThatThrownBy(() -> EngineSettings.builder().backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)).build())
        .hasMessageContaining("max backoff PT1S must not be shorter than the initial backoff PT2S");
    assertThatThrownBy(() -> EngineSettings.builder().callbackThreads(0).build())
        .hasMessageContaining("callback threads must be between 1 and 64, got 0");
    assertThatThrownBy(() -> EngineSettings.builder().responseTimeout(Duration.ZERO).build())
        .hasMessageContaining("watch response timeout must be positive, got PT0S");
  }
}
