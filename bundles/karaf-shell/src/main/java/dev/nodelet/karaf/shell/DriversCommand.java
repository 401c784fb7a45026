package dev.nodelet.karaf.shell;

import dev.nodelet.dra.DraStatus;
import dev.nodelet.shell.views.DraViews;
import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code nodelet:drivers}: one line per DRA driver the node controller knows. */
@Service
@Command(scope = "nodelet", name = "drivers", description = "Lists the DRA drivers with state, last snapshot, "
    + "backoff, grace period left and last error")
public class DriversCommand implements Action {

  /** Optional, so that the object cache commands of this bundle register without the DRA controller. */
  @Reference(optional = true)
  DraStatus status;

  @Override
  public Object execute() {
    if (status == null) {
      throw new IllegalStateException("the DRA node controller (feature nodelet-dra) is not running");
    }
    System.out.print(DraViews.drivers(status.drivers()));
    return null;
  }
}
