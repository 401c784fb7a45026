package dev.nodelet.karaf.shell;

import dev.nodelet.shell.views.ObjectViews;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code nodelet:objects}: every referenced object with its strategy, state, reference count and last access. */
@Service
@Command(scope = "nodelet", name = "objects", description = "Lists the ConfigMaps and Secrets that registered pods "
    + "reference, with strategy, state, reference count and last access (never their content)")
public class ObjectsCommand extends ManagersCommand {

  @Override
  public Object execute() {
    System.out.print(ObjectViews.objects(managers));
    return null;
  }
}
