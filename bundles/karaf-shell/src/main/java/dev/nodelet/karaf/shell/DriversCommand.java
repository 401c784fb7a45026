package dev.nodelet.karaf.shell;

import dev.nodelet.dra.DraStatus;
import dev.nodelet.shell.views.DraViews;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code nodelet:drivers}: one line per DRA driver the node controller knows. */
@Service
@Command(scope = "nodelet", name = "drivers", description = "Lists the DRA drivers with state, last snapshot, "
    + "backoff, grace period left and last error")
public class DriversCommand extends DraStatusCommand {

  @Override
  String view(DraStatus status) {
    return DraViews.drivers(status.drivers());
  }
}
