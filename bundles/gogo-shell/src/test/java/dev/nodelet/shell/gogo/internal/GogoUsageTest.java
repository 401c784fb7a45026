package dev.nodelet.shell.gogo.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** In Gogo's own runtime, a wrong argument gets the command's usage, not Gogo's "Cannot coerce ...". */
class GogoUsageTest {

  private final ThreadIOImpl threadIo = new ThreadIOImpl();
  private CommandProcessorImpl processor;
  private CommandSession session;

  @BeforeEach
  void start() {
    threadIo.start();
    processor = new CommandProcessorImpl(threadIo);
    ObjectCacheCommands objects = new ObjectCacheCommands();
    for (String function : new String[] {"pods", "objects", "get", "strategy", "watch", "watchstats"}) {
      processor.addCommand("nodelet", objects, function);
    }
    // the usage needs no status service
    processor.addCommand("nodelet", new DraCommands(null), "drivers");
    processor.addCommand("nodelet", new DraCommands(null), "slices");
    processor.addCommand("nodelet", new ClaimsCommands(null), "claims");
    session = processor.createSession(new ByteArrayInputStream(new byte[0]), new ByteArrayOutputStream(),
        new ByteArrayOutputStream());
  }

  @AfterEach
  void stop() {
    session.close();
    processor.stop();
    threadIo.stop();
  }

  @Test
  void aWrongArgumentGetsTheCommandsUsage() {
    assertThatThrownBy(() -> session.execute("nodelet:get Token"))
        .hasMessage("nodelet:get: wrong arguments: Token\n"
            + "usage: nodelet:get [--show-secret] <configmap|secret> <namespace> <name>");
    assertThatThrownBy(() -> session.execute("nodelet:get"))
        .hasMessage("nodelet:get: arguments missing\n"
            + "usage: nodelet:get [--show-secret] <configmap|secret> <namespace> <name>");
    assertThatThrownBy(() -> session.execute("nodelet:watch"))
        .hasMessage("nodelet:watch: arguments missing\nusage: nodelet:watch <configmap|secret> [<namespace> [<name>]]");
    assertThatThrownBy(() -> session.execute("nodelet:pods a b"))
        .hasMessage("nodelet:pods: wrong arguments: a b\nusage: nodelet:pods [--receipts]");
    assertThatThrownBy(() -> session.execute("nodelet:strategy a b c d"))
        .hasMessageStartingWith("nodelet:strategy: wrong arguments: a b c d\nusage: nodelet:strategy");
    for (String command : new String[] {"objects", "watchstats", "drivers", "slices", "claims"}) {
      assertThatThrownBy(() -> session.execute("nodelet:" + command + " extra"))
          .hasMessage("nodelet:" + command + ": wrong arguments: extra\nusage: nodelet:" + command);
    }
  }

  @Test
  void rightArgumentsStillReachTheirCommand() throws Exception {
    assertThat(session.execute("nodelet:objects")).asString().startsWith("RESOURCE");
    assertThat(session.execute("nodelet:watchstats")).asString().startsWith("RESOURCE");
    assertThatThrownBy(() -> session.execute("nodelet:get configmap ns name"))
        .as("three arguments reach get itself").hasMessageStartingWith("no manager of configmap");
    assertThatThrownBy(() -> session.execute("nodelet:pods --all"))
        .hasMessage("nodelet:pods: unknown option --all, the only option is --receipts\nusage: nodelet:pods [--receipts]");
  }
}
