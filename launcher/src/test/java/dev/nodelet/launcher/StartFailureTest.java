package dev.nodelet.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.http.HttpTimeoutException;
import org.junit.jupiter.api.Test;

/** What the launcher prints when it cannot start: the message, and the root cause when that says more. */
class StartFailureTest {

  @Test
  void fabric8sBareMessageGetsItsRootCause() {
    Exception e = new KubernetesClientException("An error has occurred.",
        new IOException("wrapped", new HttpTimeoutException("request timed out")));
    assertThat(Main.describe(e))
        .isEqualTo("An error has occurred. (java.net.http.HttpTimeoutException: request timed out)");
  }

  @Test
  void aMessageWithoutCauseStandsAlone() {
    assertThat(Main.describe(new IllegalArgumentException("--run /tmp is open to other users")))
        .isEqualTo("--run /tmp is open to other users");
  }
}
