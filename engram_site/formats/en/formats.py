# The English dashboard keeps the ISO dates it always showed (Django's English
# short formats are American, m/d/Y); 中文 and Русский use Django's own.
SHORT_DATE_FORMAT = "Y-m-d"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
